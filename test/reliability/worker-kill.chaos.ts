/**
 * R2 (slow variant, `npm run test:chaos`): twelve runs, the worker SIGKILLed six times at arbitrary points (every
 * few deliveries), a new worker each time.
 */
import { expectExactlyOnceEffects, KillHarness } from './worker-kill-scenario';

describe('R2 chaos: repeated worker kill -9', () => {
  const harness = new KillHarness();
  beforeAll(() => harness.setUp());
  afterAll(() => harness.tearDown());

  it('every run completes with exactly-once effects after six kills', async () => {
    const outcome = await harness.run({ runs: 12, mode: 'random', kills: 6, eventsPerKill: 3 });
    expect(outcome.kills).toBe(6);
    expectExactlyOnceEffects(outcome);
  }, 600_000);
});
