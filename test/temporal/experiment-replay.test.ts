/**
 * Replay of committed experiment histories against the current workflow bundle (decision 0630): the parent that runs
 * each dataset item as a child run and scores it, and one item's child (the run created by its first activity, then
 * the ordinary run workflow inline). A change to the commands either issues fails here instead of breaking an
 * experiment in flight (docs/decisions/0430-shipping-workflow-changes.md).
 *
 * Recorded from a real experiment: `STEPWISE_RECORD_HISTORIES=experiment npx jest test/temporal/experiment-replay`
 * writes test/temporal/histories/experiment-*.json — two items of a one-step `transform` workflow, one at a time, one
 * item per execution of the parent (EXPERIMENT_UNITS_PER_EXECUTION=1), so its continue-as-new is replayed too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Runtime, Worker } from '@temporalio/worker';
import { startGraphStack } from '../helpers/graph-stack';
import { testDataConverter, uniqueId } from '../helpers/stack';
import { testTemporalLogger } from '../helpers/test-logging';
import { createWorkflow } from '../helpers/workflows';

const DIR = path.resolve(__dirname, 'histories');
// The parent's two executions (one item each: the first continues as new, the second finishes) and one item's child.
const FILES = ['experiment-parent.json', 'experiment-parent-last.json', 'experiment-item.json'];
const { EventType } = temporal.api.enums.v1;
const RECORD = process.env.STEPWISE_RECORD_HISTORIES === 'experiment';
const { History } = temporal.api.history.v1;

const toJson = (history: temporal.api.history.v1.IHistory) =>
  JSON.stringify(
    History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String }),
    null,
    1,
  );
const fromJson = (text: string) => History.fromObject(JSON.parse(text) as Record<string, unknown>);

async function record(): Promise<void> {
  // Without payload encryption, so the committed histories read as plain JSON.
  const g = await startGraphStack({ PAYLOAD_CODEC_KEYS: '', EXPERIMENT_UNITS_PER_EXECUTION: '1' });
  try {
    const post = async (url: string, body: object) => {
      const res = await g.api.http.post(`/api/v1${url}`).set(g.user.auth).send(body);
      if (res.status !== 201) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { data: { id: string } }).data.id;
    };
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('add'),
      steps: [
        { id: 'add', template_id: g.tpl.transform._id, config: { expression: '{"sum": a + b}', data: '{{input}}' } },
      ],
    });
    const ds = await post('/datasets', { name: uniqueId('set-') });
    await post(`/datasets/${ds}/items`, {
      items: [
        { input: { a: 1, b: 2 }, expected: { add: { sum: 3 } } },
        { input: { a: 3, b: 4 }, expected: { add: { sum: 7 } } },
      ],
    });
    const exp = await post('/experiments', {
      dataset_id: ds,
      workflow_id: wf,
      scorers: [{ kind: 'exact', path: 'add.sum' }],
      concurrency: 1,
    });
    const parent = g.api.temporal.workflow.getHandle(exp);
    await parent.result();
    const firstRunId = (await parent.describe()).raw.workflowExecutionInfo?.firstRunId ?? undefined;
    const first = await g.api.temporal.workflow.getHandle(exp, firstRunId).fetchHistory();
    const last = first.events?.[first.events.length - 1];
    if (last?.eventType !== EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW) {
      throw new Error('the experiment did not continue as new');
    }
    const child = first.events?.find((e) => e.childWorkflowExecutionStartedEventAttributes)
      ?.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
    if (!child) throw new Error('the experiment started no child');
    fs.writeFileSync(path.join(DIR, FILES[0]!), toJson(first));
    fs.writeFileSync(path.join(DIR, FILES[1]!), toJson(await parent.fetchHistory()));
    fs.writeFileSync(path.join(DIR, FILES[2]!), toJson(await g.api.temporal.workflow.getHandle(child).fetchHistory()));
  } finally {
    await g.stop();
  }
}

describe('replay of committed experiment histories', () => {
  beforeAll(async () => {
    try {
      Runtime.install({ logger: testTemporalLogger() });
    } catch {
      // already installed in this process
    }
    if (RECORD) await record();
  }, 120_000);

  it.each(FILES)('%s replays with the current workflow code', async (file) => {
    const bundle = process.env.STEPWISE_TEST_BUNDLE;
    if (!bundle) throw new Error('STEPWISE_TEST_BUNDLE is not set: run the suite with "npm test"');
    const text = fs.readFileSync(path.join(DIR, file), 'utf8');
    // Each is the workflow type it stands for.
    expect(text).toContain(file === FILES[2] ? '"experimentItemWorkflow"' : '"experimentWorkflow"');
    // The first execution of the parent ends in continue-as-new, the last in completion.
    if (file === FILES[0]) expect(text).toContain('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    if (file === FILES[1]) expect(text).toContain('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: bundle }, dataConverter: testDataConverter() },
      fromJson(text),
      file,
    );
  });
});
