/**
 * Stepwise's `/mcp` driven by the official MCP SDK client over Streamable HTTP, against the real API, a real worker
 * and Temporal: tools listed per user and paged, a workflow tool followed as a task to its result, an approval
 * answered from the client, a run cancelled through its task, a retried request starting one run, tool errors for bad
 * calls, and 401 without a key.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  type CallToolResult,
  type Task,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { runsCollection } from '../../db/runs';
import type { JsonObject } from '../../domain/json';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow } from '../helpers/workflows';

/** Polls `read` until `done` holds; fails with the last value after the deadline. */
async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  let last: T;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('/mcp', () => {
  let g: GraphStack;
  let base: string;
  let other: TestUser;
  let otherTpl: GraphStack['tpl'];
  const clients: Client[] = [];

  beforeAll(async () => {
    g = await startGraphStack();
    base = await g.api.listen();
    other = await createTestUser(g.api.database.db);
    otherTpl = await actionTemplates(g.api.database.db, other.id);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await g?.stop();
  });

  const connect = async (user: TestUser): Promise<Client> => {
    const client = new Client({ name: 'stepwise-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${user.key}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  const listAll = async (client: Client): Promise<{ pages: Tool[][] }> => {
    const pages: Tool[][] = [];
    let cursor: string | undefined;
    do {
      const res = await client.listTools(cursor ? { cursor } : {});
      pages.push(res.tools);
      cursor = res.nextCursor;
    } while (cursor);
    return { pages };
  };

  const echoWorkflow = (user: TestUser, name: string, extra: JsonObject = {}, tpl = g.tpl) =>
    createWorkflow(g.api, user, {
      name,
      steps: [
        { id: 'echo', template_id: tpl.transform._id, config: { expression: '{"topic": topic}', data: '{{input}}' } },
      ],
      ...extra,
    });

  const startTask = async (client: Client, name: string, args: JsonObject): Promise<Task> => {
    const res = await client.request(
      { method: 'tools/call', params: { name, arguments: args, task: {} } },
      CreateTaskResultSchema,
    );
    return res.task;
  };

  it('answers 401 with a JSON-RPC error body without a key or with a wrong one', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    for (const headers of [{}, { Authorization: 'Bearer sw_not_a_key' }] as Array<Record<string, string>>) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string }; id: null };
      expect(body.jsonrpc).toBe('2.0');
      expect(body.id).toBeNull();
      expect(body.error.message).toMatch(/API key/);
    }
    // The SDK client fails to connect rather than hanging.
    const client = new Client({ name: 'anonymous', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))).rejects.toThrow();
  });

  it('answers GET and DELETE 405 (no sessions, no server stream) and refuses JSON-RPC batches', async () => {
    const auth = { Authorization: `Bearer ${g.user.key}` };
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { ...auth, Accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
    const batch = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]),
    });
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 }, id: null });
    // A client that accepts JSON only is answered (answers are JSON anyway).
    const jsonOnly = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(jsonOnly.status).toBe(200);
    expect(((await jsonOnly.json()) as { result: { tools: Tool[] } }).result.tools.length).toBeGreaterThanOrEqual(6);
  });

  it("lists the caller's listed workflows as tools, paged, with unique names and their input schemas", async () => {
    const user = await createTestUser(g.api.database.db);
    const tpl = await actionTemplates(g.api.database.db, user.id);
    const schema = { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] };
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push(await echoWorkflow(user, `Bulk flow ${i}`, {}, tpl));
    const first = await echoWorkflow(
      user,
      'Daily Report!',
      { description: 'Writes the report.', config: { input_schema: schema } },
      tpl,
    );
    const second = await echoWorkflow(user, 'daily report', {}, tpl);
    const hidden = await echoWorkflow(user, 'Hidden flow', { config: { mcp: { listed: false } } }, tpl);
    const clash = await echoWorkflow(user, 'get_run', {}, tpl);
    const othersWf = await echoWorkflow(other, uniqueId('others-flow'), {}, otherTpl);

    const client = await connect(user);
    const { pages } = await listAll(client);
    expect(pages).toHaveLength(2);
    expect(pages[0]).toHaveLength(8 + 50);
    const tools = pages.flat();
    const names = tools.map((t) => t.name);
    expect(names.slice(0, 8)).toEqual([
      'list_workflows',
      'start_run',
      'get_run',
      'list_approvals',
      'decide_approval',
      'cancel_run',
      'send_thread_message',
      'get_thread_turn',
    ]);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    const byWorkflow = new Map(tools.map((t) => [t._meta?.['io.stepwise/workflow_id'] as string | undefined, t]));
    expect(byWorkflow.size).toBe(53 + 3 + 1); // the fixed tools share the key `undefined`
    expect(byWorkflow.has(hidden)).toBe(false);
    expect(byWorkflow.has(othersWf)).toBe(false);
    for (const id of ids) expect(byWorkflow.has(id)).toBe(true);
    // The older workflow keeps the plain name; the later one, and one named like a fixed tool, get an id suffix.
    expect(byWorkflow.get(first)?.name).toBe('daily_report');
    expect(byWorkflow.get(second)?.name).toBe(`daily_report_${second.slice(-6)}`);
    expect(byWorkflow.get(clash)?.name).toBe(`get_run_${clash.slice(-6)}`);
    expect(byWorkflow.get(first)?.description).toMatch(/^Writes the report\./);
    expect(byWorkflow.get(first)?.inputSchema).toEqual(schema);
    expect(byWorkflow.get(second)?.inputSchema).toEqual({ type: 'object', additionalProperties: true });
    expect(byWorkflow.get(first)?.execution?.taskSupport).toBe('optional');

    // list_workflows leaves out the same workflows.
    const listed = (await client.callTool({ name: 'list_workflows', arguments: {} })) as CallToolResult;
    const page = listed.structuredContent as { workflows: Array<{ id: string }>; next_cursor: string | null };
    expect(page.workflows).toHaveLength(50);
    expect(page.next_cursor).not.toBeNull();
    const rest = (await client.callTool({
      name: 'list_workflows',
      arguments: { cursor: page.next_cursor },
    })) as CallToolResult;
    const all = [...page.workflows, ...(rest.structuredContent as typeof page).workflows].map((w) => w.id);
    expect(all).toHaveLength(53 + 3);
    expect(all).not.toContain(hidden);
    expect(all).not.toContain(othersWf);
  });

  it('starts a run from a workflow tool as a task and follows it to its outputs', async () => {
    const name = uniqueId('echo-');
    const wf = await echoWorkflow(g.user, name);
    const client = await connect(g.user);
    // As a client does: the tool list tells it which tools take tasks.
    const listed = await client.listTools();
    expect(listed.tools.find((t) => t.name === name)?.execution?.taskSupport).toBe('optional');
    const seen: string[] = [];
    let result: CallToolResult | undefined;
    let taskId: string | undefined;
    for await (const message of client.experimental.tasks.callToolStream({ name, arguments: { topic: 'tides' } })) {
      seen.push(message.type);
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result as CallToolResult;
      if (message.type === 'error') throw message.error;
    }
    expect(seen[0]).toBe('taskCreated');
    expect(taskId).toMatch(/^run_/);
    expect(result?.isError).toBeFalsy();
    expect(result?.structuredContent).toMatchObject({
      run_id: taskId,
      workflow_id: wf,
      status: 'completed',
      outputs: { echo: { topic: 'tides' } },
    });
    // The task is the run: the HTTP API knows it by the same id.
    const status = await g.api.http.get(`/api/v1/workflows/runs/${taskId}/status`).set(g.user.auth);
    expect(status.body.data).toMatchObject({ status: 'completed', workflow_id: wf });
    // Another user's client does not see the task.
    const stranger = await connect(other);
    await expect(stranger.experimental.tasks.getTask(taskId!)).rejects.toThrow(/Task not found/);
  });

  it('answers a client without task support at once with the run id, to follow with get_run', async () => {
    const name = uniqueId('plain-');
    await echoWorkflow(g.user, name);
    const client = await connect(g.user);
    const started = (await client.callTool({ name, arguments: { topic: 'moon' } })) as CallToolResult;
    expect(started.isError).toBeFalsy();
    const { run_id, status_url } = started.structuredContent as { run_id: string; status_url: string };
    expect(status_url).toBe(`${base}/api/v1/workflows/runs/${run_id}/status`);
    const done = await waitFor(
      async () => (await client.callTool({ name: 'get_run', arguments: { run_id } })) as CallToolResult,
      (r) => (r.structuredContent as { status: string }).status === 'completed',
      'the run to complete',
    );
    expect(done.structuredContent).toMatchObject({ run_id, outputs: { echo: { topic: 'moon' } } });
  });

  it('reports a run waiting for approval as input_required, and completes it after decide_approval', async () => {
    const name = uniqueId('gated-');
    await createWorkflow(g.api, g.user, {
      name,
      steps: [
        { id: 'gate', template_id: g.tpl.approval._id, config: { message: 'Publish the tide tables?' } },
        { id: 'after', template_id: g.tpl.transform._id, config: { expression: '"published"' } },
      ],
    });
    const client = await connect(g.user);
    const task = await startTask(client, name, {});
    expect(['working', 'input_required']).toContain(task.status);
    const waiting = await waitFor(
      () => client.experimental.tasks.getTask(task.taskId),
      (t) => t.status === 'input_required',
      'input_required',
    );
    expect(waiting.statusMessage).toContain('Publish the tide tables?');
    expect(waiting.statusMessage).toContain('decide_approval');

    const inbox = (await client.callTool({ name: 'list_approvals', arguments: {} })) as CallToolResult;
    const approvals = (inbox.structuredContent as { approvals: Array<{ run_id: string; step_id: string }> }).approvals;
    expect(approvals).toContainEqual(expect.objectContaining({ run_id: task.taskId, step_id: 'gate' }));
    // Another user can neither see nor decide it.
    const stranger = await connect(other);
    const refused = (await stranger.callTool({
      name: 'decide_approval',
      arguments: { run_id: task.taskId, step_id: 'gate', approved: true },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/not found/);

    const decided = (await client.callTool({
      name: 'decide_approval',
      arguments: { run_id: task.taskId, step_id: 'gate', approved: true, comment: 'go' },
    })) as CallToolResult;
    expect(decided.isError).toBeFalsy();
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ status: 'completed', outputs: { after: 'published' } });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
  });

  it('cancels the run through tasks/cancel', async () => {
    const name = uniqueId('slow-');
    await createWorkflow(g.api, g.user, {
      name,
      steps: [{ id: 'wait', template_id: g.tpl.delay._id, config: { seconds: 600 } }],
    });
    const client = await connect(g.user);
    const task = await startTask(client, name, {});
    await waitFor(
      async () => (await g.api.http.get(`/api/v1/workflows/runs/${task.taskId}/status`).set(g.user.auth)).body,
      (b: { data: { steps: Array<{ status: string }> } }) => b.data.steps[0]?.status === 'running',
      'the delay to start',
    );
    await client.experimental.tasks.cancelTask(task.taskId);
    const cancelled = await waitFor(
      () => client.experimental.tasks.getTask(task.taskId),
      (t) => t.status === 'cancelled',
      'the task to be cancelled',
    );
    expect(cancelled.taskId).toBe(task.taskId);
    const run = await g.api.http.get(`/api/v1/workflows/runs/${task.taskId}/status`).set(g.user.auth);
    expect(run.body.data.status).toBe('cancelled');
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/Cannot cancel/);
  });

  it('starts one run for a retried request, and a new one for a new request', async () => {
    const name = uniqueId('retried-');
    const wf = await echoWorkflow(g.user, name);
    const post = async (id: number) => {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${g.user.key}`,
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { topic: 'x' } } }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { result: CallToolResult };
      expect(body.result.isError).toBeFalsy();
      return (body.result.structuredContent as { run_id: string }).run_id;
    };
    const first = await post(7);
    expect(await post(7)).toBe(first);
    const third = await post(8);
    expect(third).not.toBe(first);
    expect(await runsCollection(g.api.database.db).countDocuments({ workflow_id: wf })).toBe(2);
  });

  it('answers bad calls with tool errors, and the transport goes on serving', async () => {
    const name = uniqueId('typed-');
    await echoWorkflow(g.user, name, {
      config: { input_schema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] } },
    });
    const theirs = await echoWorkflow(other, uniqueId('theirs-'), {}, otherTpl);
    const client = await connect(g.user);
    const call = async (tool: string, args: JsonObject) =>
      (await client.callTool({ name: tool, arguments: args })) as CallToolResult;

    const badInput = await call(name, { topic: 42 });
    expect(badInput.isError).toBe(true);
    expect(textOf(badInput)).toMatch(/topic/);
    const operatorKey = await call(name, { topic: 'a', $where: 'x' });
    expect(operatorKey.isError).toBe(true);
    expect(textOf(operatorKey)).toMatch(/\$where/);
    const unknownTool = await call('no_such_workflow', {});
    expect(unknownTool.isError).toBe(true);
    expect(textOf(unknownTool)).toMatch(/unknown tool/);
    const othersWorkflow = await call('start_run', { workflow_id: theirs });
    expect(othersWorkflow.isError).toBe(true);
    expect(textOf(othersWorkflow)).toMatch(/not found/);
    const badArgs = await call('get_run', {});
    expect(badArgs.isError).toBe(true);
    expect(textOf(badArgs)).toMatch(/run_id/);

    // Another user's run is as unknown as a made-up one.
    const stranger = await connect(other);
    const started = (await stranger.callTool({
      name: 'start_run',
      arguments: { workflow_id: theirs },
    })) as CallToolResult;
    const theirRun = (started.structuredContent as { run_id: string }).run_id;
    for (const tool of ['get_run', 'cancel_run']) {
      const res = await call(tool, { run_id: theirRun });
      expect(res.isError).toBe(true);
      expect(textOf(res)).toBe(`run ${theirRun} not found`);
    }
    expect((await client.listTools()).tools.length).toBeGreaterThan(6);
  });
});
