/**
 * Replay of committed histories of agent steps with MCP tools against the current workflow bundle: a change to the
 * commands the loop issues for MCP steps fails here.
 * - mcp-tools-round-trip.json: listing, a retried-class call and an error result.
 * - mcp-tool-approved.json: a destructive tool call that waited for the owner's decision and, approved, was made.
 * Re-record with `STEPWISE_RECORD_HISTORIES=mcp` (or `mcp-approval`) `npx jest test/mcp/mcp-replay` (a live run
 * against the failure server; without payload encryption, so the file reads as plain JSON).
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Runtime, Worker } from '@temporalio/worker';
import { createAgentWorkflow, runAgent } from '../helpers/agent-runs';
import { startLlmServer } from '../helpers/llm-server';
import { startTestApi, startTestWorker, testConfig, testDataConverter, uniqueId } from '../helpers/stack';
import { testTemporalLogger } from '../helpers/test-logging';
import { createTestUser } from '../helpers/users';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import { startFailureServer } from './mcp-test-servers';

const FILE = path.resolve(__dirname, '..', 'temporal', 'histories', 'mcp-tools-round-trip.json');
const APPROVED_FILE = path.resolve(__dirname, '..', 'temporal', 'histories', 'mcp-tool-approved.json');
const { History } = temporal.api.history.v1;
const toJson = (history: temporal.api.history.v1.IHistory) =>
  JSON.stringify(
    History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String }),
    null,
    1,
  );
const fromJson = (text: string) => History.fromObject(JSON.parse(text) as Record<string, unknown>);

interface HistoryJson {
  events: {
    workflowExecutionStartedEventAttributes?: { input: { payloads: { data: string }[] } };
    activityTaskScheduledEventAttributes?: { activityType: { name: string } };
  }[];
}

async function record(): Promise<void> {
  const [llm, server] = await Promise.all([startLlmServer(), startFailureServer()]);
  const api = await startTestApi(
    testConfig({
      OPENAI_API_KEY: 'sk-test-replay-000000',
      OPENAI_BASE_URL: llm.baseUrl,
      HTTP_ALLOWED_HOSTS: server.host,
      PAYLOAD_CODEC_KEYS: '',
    }),
  );
  const worker = await startTestWorker(api.config, api.database);
  try {
    const user = await createTestUser(api.database.db);
    const res = await api.http.post('/api/v1/mcp-servers').set(user.auth).send({ name: 'ops', url: server.url });
    const serverId = (res.body as { data: { id: string } }).data.id;
    const script = llm.script(uniqueId('gpt-test-'), [
      {
        toolCalls: [
          { name: 'ops__lookup', args: { key: 'k' } },
          { name: 'ops__explode', args: {} },
        ],
      },
      { text: 'done' },
    ]);
    const { runId } = await runAgent(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: serverId, include: ['lookup', 'explode'] }] },
    });
    const handle = api.temporal.workflow.getHandle(runId);
    await handle.result().catch(() => undefined);
    fs.writeFileSync(FILE, toJson(await handle.fetchHistory()));
  } finally {
    await worker.stop();
    await api.close();
    await Promise.all([llm.close(), server.close()]);
  }
}

/** An agent step whose destructive `wipe` call waits in the approvals inbox, is approved, and is made once. */
async function recordApproved(): Promise<void> {
  const [llm, server] = await Promise.all([startLlmServer(), startFailureServer()]);
  const api = await startTestApi(
    testConfig({
      OPENAI_API_KEY: 'sk-test-replay-000000',
      OPENAI_BASE_URL: llm.baseUrl,
      HTTP_ALLOWED_HOSTS: server.host,
      PAYLOAD_CODEC_KEYS: '',
    }),
  );
  const worker = await startTestWorker(api.config, api.database);
  try {
    const user = await createTestUser(api.database.db);
    const res = await api.http.post('/api/v1/mcp-servers').set(user.auth).send({ name: 'ops', url: server.url });
    const serverId = (res.body as { data: { id: string } }).data.id;
    const script = llm.script(uniqueId('gpt-test-'), [
      { toolCalls: [{ name: 'ops__wipe', args: { target: 'staging' } }] },
      { text: 'done' },
    ]);
    const workflowId = await createAgentWorkflow(api, user, {
      model: `openai:${script.model}`,
      step: { mcp_tools: [{ server_id: serverId, include: ['wipe'] }] },
    });
    const runId = await startRun(api, user, workflowId, { question: 'wipe staging' });
    await waitForStatus(api, user, runId, (s) => s.status === 'waiting');
    const decided = await api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(user.auth)
      .send({ step_id: 'ask', approved: true });
    if (decided.status !== 200) throw new Error(`approve: ${decided.status} ${JSON.stringify(decided.body)}`);
    const status = await waitForStatus(api, user, runId, isTerminal);
    if (status.status !== 'completed') throw new Error(`the run ended ${status.status}`);
    fs.writeFileSync(APPROVED_FILE, toJson(await api.temporal.workflow.getHandle(runId).fetchHistory()));
  } finally {
    await worker.stop();
    await api.close();
    await Promise.all([llm.close(), server.close()]);
  }
}

describe('replay of a committed MCP agent history', () => {
  const bundle = () => {
    const path = process.env.STEPWISE_TEST_BUNDLE;
    if (!path) throw new Error('STEPWISE_TEST_BUNDLE is not set: run the suite with "npm test"');
    return path;
  };
  beforeAll(async () => {
    try {
      Runtime.install({ logger: testTemporalLogger() });
    } catch {
      // already installed in this process
    }
    if (process.env.STEPWISE_RECORD_HISTORIES === 'mcp') await record();
    if (process.env.STEPWISE_RECORD_HISTORIES === 'mcp-approval') await recordApproved();
  }, 120_000);

  it('replays with the current workflow code, and lists and calls as activities', async () => {
    const text = fs.readFileSync(FILE, 'utf8');
    const json = JSON.parse(text) as HistoryJson;
    const scheduled = json.events
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType.name)
      .filter((n) => n === 'listMcpTools' || n === 'callMcpTool' || n === 'callModel');
    expect(scheduled).toEqual(['listMcpTools', 'callModel', 'callMcpTool', 'callMcpTool', 'callModel']);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: bundle() }, dataConverter: testDataConverter() },
      fromJson(text),
      'mcp',
    );
  });

  it('replays a destructive call that waited for its approval and was made once', async () => {
    const text = fs.readFileSync(APPROVED_FILE, 'utf8');
    const json = JSON.parse(text) as HistoryJson;
    const scheduled = json.events
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType.name)
      .filter((n) => n !== undefined && n !== 'projectStep');
    expect(scheduled).toEqual(['listMcpTools', 'callModel', 'requestMcpApproval', 'callMcpTool', 'callModel']);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: bundle() }, dataConverter: testDataConverter() },
      fromJson(text),
      'mcp-approved',
    );
  });

  it('fails the replay when the step no longer has its MCP tools (the check bites)', async () => {
    const json = JSON.parse(fs.readFileSync(FILE, 'utf8')) as HistoryJson;
    const payload = json.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads[0]!;
    const snapshot = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) as {
      steps: { mcp_tools?: unknown }[];
    };
    expect(snapshot.steps[0]!.mcp_tools).toBeDefined();
    delete snapshot.steps[0]!.mcp_tools;
    payload.data = Buffer.from(JSON.stringify(snapshot)).toString('base64');
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: bundle() } }, fromJson(JSON.stringify(json)), 'no-mcp'),
    ).rejects.toThrow(/[Nn]ondeterminism/);
  });
});
