/**
 * Every GET route of the OpenAPI document only reads (issue #45): each is called on real data — a finished run with
 * an agent step and a map, a run waiting for an approval, a hook, a schedule, an MCP server — through an app whose
 * MongoDB client records every command and whose Temporal client records every call, and none may write, start a
 * workflow or change one. A route added to the document without a row here fails the test until it has one.
 *
 * Request accounting is not resource state and is the one exception, the same for every request: the rate limiter's
 * counters (`rate_limits`) and a key's `last_used_at` mark (at most once a minute, db/users.ts).
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { Registry } from 'prom-client';
import request from 'supertest';
import { createApp } from '../../api/app';
import { composeApi } from '../../api/compose';
import { buildOpenApiDocument } from '../../api/openapi/document';
import { createTemporalClient } from '../../shared/temporal-client';
import { insertAgentTemplate } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import {
  silentLogger,
  startTestApi,
  startTestWorker,
  testConfig,
  uniqueId,
  type TestApi,
  type TestWorker,
} from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'bulkWrite', 'createIndexes', 'drop']);
/** Temporal calls that only read; any other (start, signal, update, cancel, terminate, schedule changes…) fails. */
const TEMPORAL_READ = /^(Describe|Get|List|Count|Query|PollWorkflowExecutionUpdate)/;

/** Whether a write command is request accounting (see the header), not a change of what was read. */
function accounting(c: CommandStartedEvent): boolean {
  const collection = String(c.command[c.commandName]);
  if (collection === 'rate_limits') return true;
  if (collection !== 'api_keys' || c.commandName !== 'update') return false;
  const updates = c.command.updates as { u: Record<string, Record<string, unknown>> }[];
  return updates.every(
    (u) => Object.keys(u.u).every((op) => op === '$set') && Object.keys(u.u.$set!).join() === 'last_used_at',
  );
}

describe('every GET route writes nothing and changes nothing in Temporal', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let monitored: MongoClient;
  let http: ReturnType<typeof request>;
  const commands: CommandStartedEvent[] = [];
  const temporalCalls: string[] = [];
  /** Path template → the concrete path to read. */
  const paths = new Map<string, string>();

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(testConfig({ OPENAI_API_KEY: 'sk-test-get-reads-000', OPENAI_BASE_URL: llm.baseUrl }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    const tpl = await actionTemplates(api.database.db, user.id);
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42', usage: { input: 10, output: 1 } }]);
    const agent = await insertAgentTemplate(api, user, { model: `openai:${script.model}`, tools: [] });

    const finished = await createWorkflow(api, user, {
      name: uniqueId('finished'),
      steps: [
        { id: 'ask', template_id: agent._id, input: 'What is 6 times 7?' },
        {
          id: 'each',
          template_id: tpl.transform._id,
          map: { over: '{{input.items}}' },
          config: { expression: '$', data: '{{map.item}}' },
        },
      ],
    });
    const done = await startRun(api, user, finished, { items: [1, 2] });
    const end = await waitForStatus(api, user, done, isTerminal);
    if (end.status !== 'completed') throw new Error(`the finished run ended ${JSON.stringify(end)}`);

    const gated = await createWorkflow(api, user, {
      name: uniqueId('gated'),
      steps: [{ id: 'gate', template_id: tpl.approval._id, config: { message: 'Go?' } }],
    });
    const waiting = await startRun(api, user, gated);
    await waitForStatus(api, user, waiting, (s) => s.status === 'waiting');

    const post = async (path: string, body: object) => {
      const res = await api.http.post(path).set(user.auth).send(body);
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { data: { id: string } }).data.id;
    };
    const hook = await post(`/api/v1/workflows/${gated}/hooks`, {});
    const schedule = await post(`/api/v1/workflows/${gated}/schedules`, { spec: { cron: '0 3 * * *' }, paused: true });
    const mcp = await post('/api/v1/mcp-servers', { name: uniqueId('tools'), url: 'http://127.0.0.1:9/mcp' });
    const dataset = await post('/api/v1/datasets', { name: uniqueId('set') });
    const added = await api.http
      .post(`/api/v1/datasets/${dataset}/items/from-runs`)
      .set(user.auth)
      .send({ run_ids: [done] });
    if (added.status !== 201) throw new Error(`dataset items: ${added.status} ${JSON.stringify(added.body)}`);
    const item = (added.body as { data: { items: { id: string }[] } }).data.items[0]!.id;
    // An ended experiment over that dataset (a transform step: no model call).
    const shaped = await createWorkflow(api, user, {
      name: uniqueId('shaped'),
      steps: [
        { id: 'shape', template_id: tpl.transform._id, config: { expression: '$count(items)', data: '{{input}}' } },
      ],
    });
    const experiment = await post('/api/v1/experiments', {
      dataset_id: dataset,
      workflow_id: shaped,
      scorers: [{ kind: 'exact', path: 'shape', value: 2 }],
    });
    for (let i = 0; ; i++) {
      const res = await api.http.get(`/api/v1/experiments/${experiment}`).set(user.auth);
      if ((res.body as { data: { status: string } }).data.status === 'completed') break;
      if (i > 300) throw new Error(`the experiment did not complete: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    const thread = await post('/api/v1/threads', { template: agent._id, title: 'reads' });
    const said = await api.http.post(`/api/v1/threads/${thread}/messages?wait=30`).set(user.auth).send({ text: 'Hi' });
    if (said.status !== 200) throw new Error(`thread message: ${said.status} ${JSON.stringify(said.body)}`);
    // A thread with a working memory, changed once (a version to list).
    const remembering = await post('/api/v1/agents', {
      name: uniqueId('remembering '),
      default_prompt: 'Answer.',
      model: `openai:${script.model}`,
      memory_schema: { type: 'object', properties: { name: { type: 'string' } } },
    });
    const memThread = await post('/api/v1/threads', { template: remembering, title: 'memory reads' });
    const put = await api.http
      .put(`/api/v1/threads/${memThread}/memory`)
      .set(user.auth)
      .send({ memory: { name: 'Ada' } });
    if (put.status !== 200) throw new Error(`memory: ${put.status} ${JSON.stringify(put.body)}`);

    const rows: Record<string, string> = {
      '/livez': '/livez',
      '/readyz': '/readyz',
      '/metrics': '/metrics',
      '/api/v1/openapi.json': '/api/v1/openapi.json',
      '/api/v1/agents': '/api/v1/agents',
      '/api/v1/agents/tools': '/api/v1/agents/tools',
      '/api/v1/agents/actions': '/api/v1/agents/actions',
      '/api/v1/agents/{id}': `/api/v1/agents/${agent._id}`,
      '/api/v1/workflows': '/api/v1/workflows',
      '/api/v1/workflows/{id}': `/api/v1/workflows/${finished}`,
      '/api/v1/workflows/{id}/runs': `/api/v1/workflows/${finished}/runs`,
      // A waiting run: the read that asks Temporal, and the long poll's wait.
      '/api/v1/workflows/runs/{runId}/status': `/api/v1/workflows/runs/${waiting}/status?wait=1&until=end`,
      '/api/v1/workflows/runs/{runId}/steps/{stepId}/executions': `/api/v1/workflows/runs/${done}/steps/each/executions`,
      '/api/v1/workflows/runs/{runId}/steps/{stepId}/transcript': `/api/v1/workflows/runs/${done}/steps/ask/transcript`,
      // A finished run: the stream delivers everything and ends.
      '/api/v1/workflows/runs/{runId}/events': `/api/v1/workflows/runs/${done}/events`,
      '/api/v1/approvals': '/api/v1/approvals',
      '/api/v1/runs': `/api/v1/runs?workflow_id=${finished}&q=ask`,
      '/api/v1/workflows/{id}/hooks': `/api/v1/workflows/${gated}/hooks`,
      '/api/v1/workflows/{id}/hooks/{hookId}': `/api/v1/workflows/${gated}/hooks/${hook}`,
      '/api/v1/workflows/{id}/schedules': `/api/v1/workflows/${gated}/schedules`,
      '/api/v1/schedules/{scheduleId}': `/api/v1/schedules/${schedule}`,
      '/api/v1/webhooks/secret': '/api/v1/webhooks/secret',
      '/api/v1/mcp-servers': '/api/v1/mcp-servers',
      '/api/v1/mcp-servers/{id}': `/api/v1/mcp-servers/${mcp}`,
      '/api/v1/mcp-servers/stdio': '/api/v1/mcp-servers/stdio',
      // The finished run's model call, by every group of the day documents (and the names of its template and workflow).
      '/api/v1/usage': '/api/v1/usage?group_by=day,model,template,workflow',
      '/api/v1/datasets': '/api/v1/datasets',
      '/api/v1/datasets/{id}': `/api/v1/datasets/${dataset}`,
      '/api/v1/datasets/{id}/versions': `/api/v1/datasets/${dataset}/versions`,
      // An older version than the latest would do as well: a version is read the same way.
      '/api/v1/datasets/{id}/items': `/api/v1/datasets/${dataset}/items?version=1`,
      '/api/v1/datasets/{id}/items/export': `/api/v1/datasets/${dataset}/items/export`,
      '/api/v1/datasets/{id}/items/{itemId}': `/api/v1/datasets/${dataset}/items/${item}?version=1`,
      '/api/v1/threads': `/api/v1/threads?q=reads&template_id=${agent._id}`,
      '/api/v1/threads/{id}': `/api/v1/threads/${thread}`,
      '/api/v1/threads/{id}/messages': `/api/v1/threads/${thread}/messages`,
      '/api/v1/threads/{id}/memory': `/api/v1/threads/${memThread}/memory`,
      '/api/v1/threads/{id}/memory/versions': `/api/v1/threads/${memThread}/memory/versions`,
      // A thread whose turn ended: the stream delivers its events and ends.
      '/api/v1/threads/{id}/events': `/api/v1/threads/${thread}/events?until=idle`,
      '/api/v1/experiments': '/api/v1/experiments',
      '/api/v1/experiments/{id}': `/api/v1/experiments/${experiment}`,
      '/api/v1/experiments/{id}/results': `/api/v1/experiments/${experiment}/results`,
      '/api/v1/experiments/{id}/compare': `/api/v1/experiments/${experiment}/compare?baseline=${experiment}`,
    };
    const doc = buildOpenApiDocument({ PUBLIC_URL: undefined });
    for (const [template, item] of Object.entries(doc.paths ?? {})) {
      if (!item.get) continue;
      const path = rows[template];
      if (!path) throw new Error(`GET ${template} has no row in this test: add one that reads real data`);
      paths.set(template, path);
    }

    monitored = new MongoClient(api.config.MONGODB_URI, { monitorCommands: true });
    monitored.on('commandStarted', (e) => commands.push(e));
    await monitored.connect();
    const temporal = createTemporalClient({
      address: api.config.TEMPORAL_ADDRESS,
      namespace: api.config.TEMPORAL_NAMESPACE,
      codecKeys: api.config.PAYLOAD_CODEC_KEYS,
      onCall: (method) => temporalCalls.push(method),
    });
    const app = createApp(
      composeApi({
        config: api.config,
        db: monitored.db(api.config.MONGODB_DB),
        temporal,
        logger: silentLogger,
        metrics: new Registry(),
      }),
    );
    http = request(app.callback());
  }, 120_000);
  afterAll(async () => {
    await monitored?.close();
    await worker?.stop();
    // The dev server outlives this file: its schedule must not keep firing.
    if (api)
      for await (const s of api.temporal.schedule.list()) await api.temporal.schedule.getHandle(s.scheduleId).delete();
    await api?.close();
    await llm?.close();
  });

  it('covers every GET route of the document', () => {
    expect(paths.size).toBeGreaterThanOrEqual(25);
  });

  it('answers each with 200, no write command and no Temporal call but reads', async () => {
    const problems: string[] = [];
    for (const [template, path] of paths) {
      commands.length = 0;
      temporalCalls.length = 0;
      const res = await http.get(path).set(user.auth).buffer(true);
      if (res.status !== 200) problems.push(`GET ${template}: ${res.status} ${res.text.slice(0, 200)}`);
      const writes = commands.filter((c) => WRITES.has(c.commandName) && !accounting(c));
      for (const w of writes) problems.push(`GET ${template}: ${w.commandName} ${String(w.command[w.commandName])}`);
      for (const call of temporalCalls.filter((m) => !TEMPORAL_READ.test(m)))
        problems.push(`GET ${template}: Temporal ${call}`);
    }
    expect(problems).toEqual([]);
  });
});
