/** R8 (fast variant): 50 connections, a fixed number of reads, run starts running into their per-key budget. */
import { expectHealthyUnderLoad, LoadHarness } from './load-scenario';

describe('R8: load on reads with sustained run starts', () => {
  const harness = new LoadHarness();
  beforeAll(() => harness.setUp(), 120_000);
  afterAll(() => harness.tearDown());

  it('no errors other than the configured 429s; heap within bound', async () => {
    const outcome = await harness.run({ connections: 50, reads: { amount: 3000 }, starts: { amount: 120 } });
    expectHealthyUnderLoad(outcome, harness.api.exitStatus());
  }, 180_000);
});
