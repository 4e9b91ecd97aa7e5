/**
 * Replay of committed run-workflow histories with agent steps against the current workflow bundle: a change to the
 * agent loop that alters the commands it issues fails here instead of breaking runs in flight
 * (docs/decisions/0430-shipping-workflow-changes.md).
 *
 * The histories are recorded from real runs: `STEPWISE_RECORD_HISTORIES=1 npx jest test/temporal/agent/agent-replay`
 * re-records them (tool round trip, output_schema repair, turn limit, run budget, an answer over the token budget)
 * into test/temporal/histories/agent-*.json; `STEPWISE_RECORD_HISTORIES=budget-exceeded` re-records only the named
 * ones.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Runtime, Worker } from '@temporalio/worker';
import { runAgent, type AgentCase } from '../../helpers/agent-runs';
import { startLlmServer, type Script } from '../../helpers/llm-server';
import { startTestApi, startTestWorker, testConfig, testDataConverter, uniqueId } from '../../helpers/stack';
import { createTestUser } from '../../helpers/users';
import { testTemporalLogger } from '../../helpers/test-logging';

const DIR = path.resolve(__dirname, '..', 'histories');
const RECORD = process.env.STEPWISE_RECORD_HISTORIES;
const { History } = temporal.api.history.v1;

// protobufjs' own object form (enum names, int64 and bytes as strings). The SDK's historyToJSON/historyFromJSON are
// not used: with this install's two protobufjs copies they fail with "type must be a Type".
const toJson = (history: temporal.api.history.v1.IHistory) =>
  JSON.stringify(
    History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String }),
    null,
    1,
  );
const fromJson = (text: string) => History.fromObject(JSON.parse(text) as Record<string, unknown>);

const SCENARIOS: Record<string, { script: Script; agent: Omit<AgentCase, 'model'> }> = {
  'tool-round-trip': {
    script: [{ toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }] }, { text: '42' }],
    agent: {},
  },
  'output-repair': {
    script: [{ text: 'forty-two' }, { text: '{"answer": 42}' }],
    agent: {
      tools: [],
      output_schema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] },
    },
  },
  'turn-limit': {
    script: (_req, i) => ({
      toolCalls: [
        { name: 'calculator', args: { expression: `${i}+1` } },
        { name: 'calculator', args: { expression: `${i}+2` } },
      ],
    }),
    agent: { max_turns: 2 },
  },
  // A run budget stops the loop before the third model call.
  'budget-exceeded': {
    script: (_req, i) => ({ toolCalls: [{ name: 'calculator', args: { expression: `${i}*2` } }] }),
    agent: { max_turns: 6, workflow_config: { budget: { max_model_calls: 2 } } },
  },
  // A final answer whose tokens go over the run's token budget: the step fails with budget_exceeded.
  'over-budget': {
    script: [{ text: '42', usage: { input: 30, output: 20 } }],
    agent: { workflow_config: { budget: { max_tokens: 10 } } },
  },
};

async function record(): Promise<void> {
  const llm = await startLlmServer();
  // Without payload encryption, so the committed histories read (and can be tampered with) as plain JSON.
  const api = await startTestApi(
    testConfig({ OPENAI_API_KEY: 'sk-test-replay-000000', OPENAI_BASE_URL: llm.baseUrl, PAYLOAD_CODEC_KEYS: '' }),
  );
  const worker = await startTestWorker(api.config, api.database);
  try {
    const user = await createTestUser(api.database.db);
    fs.mkdirSync(DIR, { recursive: true });
    const only = RECORD === '1' ? null : new Set(RECORD?.split(','));
    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      if (only && !only.has(name)) continue;
      const script = llm.script(uniqueId('gpt-test-'), scenario.script);
      const { runId } = await runAgent(api, user, { ...scenario.agent, model: `openai:${script.model}` });
      const handle = api.temporal.workflow.getHandle(runId);
      // The status is terminal a moment before the execution closes: the history is taken once it has.
      await handle.result().catch(() => undefined);
      const history = await handle.fetchHistory();
      fs.writeFileSync(path.join(DIR, `agent-${name}.json`), toJson(history));
    }
  } finally {
    await worker.stop();
    await api.close();
    await llm.close();
  }
}

describe('replay of committed agent-step histories', () => {
  beforeAll(async () => {
    try {
      Runtime.install({ logger: testTemporalLogger() }); // replay workers log every state change at INFO
    } catch {
      // already installed in this process
    }
    if (RECORD) await record();
  }, 120_000);

  it('replays every agent history with the current workflow code', async () => {
    const bundle = process.env.STEPWISE_TEST_BUNDLE;
    if (!bundle) throw new Error('STEPWISE_TEST_BUNDLE is not set: run the suite with "npm test"');
    const files = fs.readdirSync(DIR).filter((f) => /^agent-.*\.json$/.test(f));
    expect(files.sort()).toEqual(
      Object.keys(SCENARIOS)
        .map((n) => `agent-${n}.json`)
        .sort(),
    );
    for (const file of files) {
      const history = fromJson(fs.readFileSync(path.join(DIR, file), 'utf8'));
      // Throws a DeterminismViolationError when the code no longer issues the recorded commands.
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: bundle }, dataConverter: testDataConverter() },
        history,
        file,
      );
    }
  });

  it('the run budget is part of what replays: without it the code would call the model again', async () => {
    const bundle = process.env.STEPWISE_TEST_BUNDLE!;
    const json = JSON.parse(fs.readFileSync(path.join(DIR, 'agent-budget-exceeded.json'), 'utf8')) as {
      events: { workflowExecutionStartedEventAttributes?: { input: { payloads: { data: string }[] } } }[];
    };
    const payload = json.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads[0]!;
    const snapshot = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) as { budget?: unknown };
    expect(snapshot.budget).toMatchObject({ max_model_calls: 2 });
    delete snapshot.budget;
    payload.data = Buffer.from(JSON.stringify(snapshot)).toString('base64');
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: bundle } }, fromJson(JSON.stringify(json)), 'unbudgeted'),
    ).rejects.toThrow(/[Nn]ondeterminism/);
  });

  it('fails the replay of a history whose commands the code does not issue (the check bites)', async () => {
    const bundle = process.env.STEPWISE_TEST_BUNDLE!;
    const json = JSON.parse(fs.readFileSync(path.join(DIR, 'agent-tool-round-trip.json'), 'utf8')) as {
      events: { activityTaskScheduledEventAttributes?: { activityType: { name: string } } }[];
    };
    // As if an older loop had asked the model again where the current one runs the tool.
    const toolCall = json.events.find((e) => e.activityTaskScheduledEventAttributes?.activityType.name === 'callTool');
    toolCall!.activityTaskScheduledEventAttributes!.activityType.name = 'callModel';
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: bundle }, dataConverter: testDataConverter() },
        fromJson(JSON.stringify(json)),
        'tampered',
      ),
    ).rejects.toThrow(/[Nn]ondeterminism/);
  });
});
