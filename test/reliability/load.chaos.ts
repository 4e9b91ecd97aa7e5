/** R8 (slow variant, `npm run test:chaos`): `-c 50 -d 30` on reads after a 30 s warm-up, run starts alongside. */
import { expectHealthyUnderLoad, LoadHarness } from './load-scenario';

describe('R8 chaos: 30 s of load', () => {
  const harness = new LoadHarness();
  beforeAll(() => harness.setUp(), 120_000);
  afterAll(() => harness.tearDown());

  it('no errors other than the configured 429s; heap flat after warm-up', async () => {
    const outcome = await harness.run({ connections: 50, reads: { duration: 30 }, starts: { duration: 30 } });
    expectHealthyUnderLoad(outcome, harness.api.exitStatus());
  }, 300_000);
});
