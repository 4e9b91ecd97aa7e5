/**
 * What the Temporal Web UI shows of a run, in a real browser (Debian's chromium via playwright-core): the execution's
 * summary is the Stepwise workflow's name, each activity's summary names its step, and the search attribute
 * `StepwiseWorkflowName` finds the run in the UI's list. A Temporal dev server of its own, with its Web UI decrypting
 * payloads (summaries included) through this API's codec endpoint, as docker-compose sets it up.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureChromium, INSTALL_COMMAND } from '../../devstack/chromium';
import { freePort } from '../../devstack/process';
import { startTemporal, type TemporalServer } from '../../devstack/servers';
import { SCREENSHOT_DIR } from '../helpers/browser';
import { startHttpSink, type HttpSink } from '../helpers/http-sink';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser } from '../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('runs in the Temporal Web UI', () => {
  let temporal: TemporalServer;
  let api: TestApi;
  let worker: TestWorker;
  let browser: Browser;
  let page: Page;
  let sink: HttpSink;

  beforeAll(async () => {
    const found = ensureChromium(() => undefined);
    if (!('path' in found)) throw new Error(`${found.problem} (install it with: ${INSTALL_COMMAND})`);
    const [port, uiPort] = [await freePort(), await freePort()];
    const token = randomBytes(24).toString('hex');
    sink = await startHttpSink();
    const config = testConfig({
      HTTP_ALLOWED_HOSTS: sink.host,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      TEMPORAL_UI_URL: `http://127.0.0.1:${uiPort}`,
      CODEC_ACCESS_TOKEN: token,
    });
    // The API first (its Temporal connection is lazy): the UI's codec endpoint is its address.
    api = await startTestApi(config);
    const apiUrl = await api.listen();
    temporal = await startTemporal(
      {
        port,
        uiPort,
        logFile: path.join(process.env.STEPWISE_TEST_DIR ?? '/tmp', `temporal-ui-${port}.log`),
        uiCodecEndpoint: `${apiUrl}/codec/${token}`,
      },
      () => undefined,
    );
    worker = await startTestWorker(config, api.database);
    browser = await chromium.launch({ executablePath: found.path, headless: true, args: ['--no-sandbox'] });
    page = await (await browser.newContext({ viewport: { width: 1600, height: 1000 } })).newPage();
    page.setDefaultTimeout(45_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await worker?.stop();
    await api?.close();
    await temporal?.process.stop();
    await sink?.close();
  });

  it("shows the workflow's name and each step's id", async () => {
    const user = await createTestUser(api.database.db);
    const name = uniqueId('Order report ');
    const wf = await createWorkflow(api, user, {
      name,
      steps: [
        // Steps with side effects are activities of their own (a transform is a local activity, shown as runPureStep).
        { id: 'fetch-prices', template: 'HTTP request', config: { url: sink.url('/prices') } },
        { id: 'post-receipt', template: 'HTTP request', config: { url: sink.url('/receipts'), method: 'POST' } },
      ],
    });
    const runId = await startRun(api, user, wf);
    const done = await waitForStatus(api, user, runId, isTerminal);
    expect(done.status).toBe('completed');
    const temporalRunId = (done as unknown as { temporal: { run_id: string } }).temporal.run_id;

    try {
      // The run's timeline names every activity by its summary: the activity type, then the step's kind and id.
      await page.goto(`${temporal.uiUrl}/namespaces/default/workflows/${runId}/${temporalRunId}/timeline`);
      for (const step of ['fetch-prices', 'post-receipt']) {
        // Drawn in the timeline's chart, where part of it may lie outside the visible area.
        await page.getByText(`runActionStep • http_request ${step}`).first().waitFor({ state: 'attached' });
      }
      // The execution's summary (decrypted through the codec endpoint) is the workflow's name, its details the ids.
      // The UI renders each as markdown in a frame of its own. The ids are code there: as plain text, an id ending in
      // `_` (`wf_9FHeb7ElGBPfWas_`) lost its underscores to emphasis, and this test failed now and then.
      await page.getByText('User Metadata', { exact: true }).click();
      await page.frameLocator('#user-metadata-summary').getByText(name, { exact: true }).waitFor();
      const details = page.frameLocator('#user-metadata-details');
      await details.getByText(`Stepwise workflow ${wf}, run ${runId}`, { exact: true }).waitFor();
      expect(await details.locator('code').allTextContents()).toEqual([wf, runId]);

      // The UI's list finds the run by the workflow's name (a search attribute registered at the server's start).
      const query = encodeURIComponent(`StepwiseWorkflowName="${name}"`);
      await page.goto(`${temporal.uiUrl}/namespaces/default/workflows?query=${query}`);
      await page.getByRole('link', { name: runId }).waitFor();
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'temporal-web-ui-list.png'), fullPage: true });
    } catch (err) {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'temporal-web-ui-failure.png'), fullPage: true });
      writeFileSync(path.join(SCREENSHOT_DIR, 'temporal-web-ui-failure.html'), await page.content());
      throw err;
    }
  }, 150_000);
});
