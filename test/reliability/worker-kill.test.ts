/**
 * R2 (fast variant): three runs, the worker SIGKILLed twice while every run is inside an HTTP call, a new worker
 * each time. The slow variant with more runs and kills at arbitrary points is worker-kill.chaos.ts.
 */
import { expectExactlyOnceEffects, HTTP_STEPS, KillHarness } from './worker-kill-scenario';

describe('R2: worker kill -9 mid-run', () => {
  const harness = new KillHarness();
  beforeAll(() => harness.setUp());
  afterAll(() => harness.tearDown());

  it('every run completes; one Message-ID per e-mail step, one Idempotency-Key per HTTP step', async () => {
    const outcome = await harness.run({ runs: 3, mode: 'hang', kills: 2 });
    expect(outcome.kills).toBe(2);
    expectExactlyOnceEffects(outcome);
    // Each kill landed inside a call: the interrupted call and its retry both reached the sink.
    for (let n = 0; n < 3; n++) {
      for (const step of HTTP_STEPS) expect(outcome.sink.requestsTo(`/${step}/${n}`).length).toBeGreaterThanOrEqual(2);
    }
  }, 180_000);
});
