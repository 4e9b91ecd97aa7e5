/**
 * Threads over MCP with the SDK client against the real stack (API, worker, Temporal), a scripted model and an MCP
 * server with a destructive tool: `send_thread_message` without a thread starts one on a template and answers the
 * reply and the thread id; the next message in that thread gets the first turn as context; a turn that waits for an
 * approval answers `input_required` naming it, `decide_approval` lets it go on and `get_thread_turn` gives the reply;
 * the approval is a message of the conversation from when it is asked, in its place in the turn, then with the decision
 * (approved over MCP, rejected with a comment over the API), who made it and when;
 * bad calls (both or neither of thread_id and template, another user's thread) are tool errors.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { openApiChecker } from '../helpers/openapi';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { insertTemplate } from '../helpers/workflows';
import { startFailureServer, type FailureServer } from './mcp-test-servers';

describe('/mcp: threads', () => {
  let g: GraphStack;
  let mcp: FailureServer;
  let base: string;
  let other: TestUser;
  const clients: Client[] = [];
  const openapi = openApiChecker();

  beforeAll(async () => {
    mcp = await startFailureServer();
    g = await startGraphStack({ HTTP_ALLOWED_HOSTS: mcp.host });
    base = await g.api.listen();
    other = await createTestUser(g.api.database.db);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await g?.stop();
    await mcp?.close();
  });

  const connect = async (user: TestUser): Promise<Client> => {
    const client = new Client({ name: 'stepwise-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${user.key}` } },
      }),
    );
    clients.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
    return { res, data: res.structuredContent ?? {} };
  };

  type Message = Record<string, unknown> & {
    id: string;
    turn: number;
    role: string;
    approval?: Record<string, unknown> & { decided_at: string | null };
  };
  const conversation = async (threadId: string): Promise<Message[]> => {
    const res = await g.api.http.get(`/api/v1/threads/${threadId}/messages?limit=200`).set(g.user.auth);
    expect(res.status).toBe(200);
    // The OpenAPI document states the approval messages exactly (strict objects).
    openapi.check(res);
    return res.body.data as Message[];
  };

  it('a new thread, its reply; the next turn with context; an approval answered; bad calls refused', async () => {
    const res = await g.api.http
      .post('/api/v1/mcp-servers')
      .set(g.user.auth)
      .send({ name: uniqueId('ops'), url: mcp.url, allowed_tools: ['wipe'] });
    expect(res.status).toBe(201);
    const ops = res.body.data as { id: string; name: string };
    const wipe = `${ops.name}__wipe`;
    const model = g.llm.script(uniqueId('mcp-thread-'), [
      { text: 'Hello Ada!' },
      { text: 'Your name is Ada.' },
      { toolCalls: [{ name: wipe, args: { target: 'staging' } }] },
      { text: 'Wiped staging.' },
      { toolCalls: [{ name: wipe, args: { target: 'prod' } }] },
      { text: 'I left prod alone.' },
    ]);
    const tpl = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('mcp buddy '),
      default_prompt: 'You are a friendly assistant.',
      model: `openai:${model.model}`,
      mcp_tools: [{ server_id: ops.id }],
    });
    const client = await connect(g.user);

    const first = await call(client, 'send_thread_message', {
      template: tpl.name,
      title: 'Via MCP',
      text: 'Hi, I am Ada',
    });
    expect(first.res.isError).toBeFalsy();
    expect(first.data).toMatchObject({ status: 'completed', reply: 'Hello Ada!', turn: 1, message_id: 'm1.0' });
    const threadId = first.data.thread_id as string;
    expect(threadId).toMatch(/^thr_/);
    const thread = await g.api.http.get(`/api/v1/threads/${threadId}`).set(g.user.auth);
    expect(thread.body.data).toMatchObject({ title: 'Via MCP', template_id: tpl._id, turns: 1 });

    const second = await call(client, 'send_thread_message', { thread_id: threadId, text: 'What is my name?' });
    expect(second.data).toMatchObject({
      status: 'completed',
      reply: 'Your name is Ada.',
      turn: 2,
      thread_id: threadId,
    });
    const sent = (model.requests[1]!.body.messages as { role: string; content: unknown }[]).filter(
      (m) => m.role === 'user' || m.role === 'assistant',
    );
    expect(sent.map((m) => m.content)).toEqual(['Hi, I am Ada', 'Hello Ada!', 'What is my name?']);

    // A destructive tool call: the turn waits, and says so the way a run's task does.
    const third = await call(client, 'send_thread_message', {
      thread_id: threadId,
      text: 'Wipe staging',
      wait_seconds: 30,
    });
    expect(third.res.isError).toBeFalsy();
    expect(third.data).toMatchObject({ status: 'input_required', turn: 3, thread_id: threadId });
    expect(third.data.statusMessage).toMatch(
      /waiting for approval — step "chat": .*"target":"staging".*decide_approval/,
    );
    expect(mcp.callsOf('wipe')).toHaveLength(0);
    // The approval is in the conversation as soon as it is asked, after the turn's user message.
    const asked = await conversation(threadId);
    const approvalId = asked[asked.length - 1]!.id;
    expect(approvalId).toMatch(/^m3\.[0-9]+a0$/);
    expect(asked[asked.length - 1]).toMatchObject({
      role: 'approval',
      turn: 3,
      approval: { name: wipe, args: { target: 'staging' }, status: 'requested', decided_by: null, decided_at: null },
    });
    const decided = await call(client, 'decide_approval', {
      run_id: third.data.run_id,
      step_id: 'chat',
      approved: true,
    });
    expect(decided.res.isError).toBeFalsy();
    const after = await call(client, 'get_thread_turn', { thread_id: threadId, turn: 3, wait_seconds: 30 });
    expect(after.data).toMatchObject({ status: 'completed', reply: 'Wiped staging.', turn: 3 });
    expect(mcp.callsOf('wipe').map((c) => c.args)).toEqual([{ target: 'staging' }]);
    // Decided: in its place in the turn — after the call that asked, before the call's result — with who and when.
    const turn3 = (await conversation(threadId)).filter((m) => m.turn === 3);
    expect(turn3.map((m) => m.role)).toEqual(['user', 'assistant', 'approval', 'tool', 'assistant']);
    expect(turn3[1]!.id).toBe(approvalId.replace(/a0$/, ''));
    expect(turn3[2]).toMatchObject({
      id: approvalId,
      approval: { status: 'approved', decided_by: g.user.id, comment: null },
    });
    expect(Date.parse(turn3[2]!.approval?.decided_at ?? '')).not.toBeNaN();
    expect(turn3[3]!.tool).toMatchObject({ name: wipe, is_error: false });
    // A fork at the approval keeps the conversation up to it, the approval last.
    const fork = await g.api.http.post(`/api/v1/threads/${threadId}/fork`).set(g.user.auth).send({ at: approvalId });
    expect(fork.status).toBe(201);
    expect(fork.body.data).toMatchObject({ last_message_id: approvalId });
    const forked = await conversation(fork.body.data.id as string);
    expect(forked[forked.length - 1]).toMatchObject({ id: approvalId, approval: { status: 'approved' } });
    expect(forked.map((m) => m.id)).toEqual((await conversation(threadId)).map((m) => m.id).slice(0, forked.length));

    // Rejected in the API, with a comment: the call is not made, and the conversation says who declined and why.
    const fourth = await call(client, 'send_thread_message', {
      thread_id: threadId,
      text: 'Now prod',
      wait_seconds: 30,
    });
    expect(fourth.data).toMatchObject({ status: 'input_required', turn: 4 });
    const rejected = await g.api.http
      .post(`/api/v1/workflows/runs/${fourth.data.run_id as string}/approve`)
      .set(g.user.auth)
      .send({ step_id: 'chat', approved: false, comment: 'not prod' });
    expect(rejected.status).toBeLessThan(300);
    const end4 = await call(client, 'get_thread_turn', { thread_id: threadId, turn: 4, wait_seconds: 30 });
    expect(end4.data).toMatchObject({ status: 'completed', reply: 'I left prod alone.' });
    expect(mcp.callsOf('wipe')).toHaveLength(1);
    const turn4 = (await conversation(threadId)).filter((m) => m.turn === 4);
    expect(turn4.map((m) => m.role)).toEqual(['user', 'assistant', 'approval', 'tool', 'assistant']);
    expect(turn4[2]!.approval).toMatchObject({
      args: { target: 'prod' },
      status: 'rejected',
      decided_by: g.user.id,
      comment: 'not prod',
    });
    expect(turn4[3]!.tool).toMatchObject({ is_error: true });
    // The thread counts every message listed.
    const all = await conversation(threadId);
    const counted = await g.api.http.get(`/api/v1/threads/${threadId}`).set(g.user.auth);
    expect(counted.body.data.message_count).toBe(all.length);

    // Bad calls: tool errors the model can read.
    const both = await call(client, 'send_thread_message', { thread_id: threadId, template: tpl.name, text: 'x' });
    expect(both.res.isError).toBe(true);
    const neither = await call(client, 'send_thread_message', { text: 'x' });
    expect(neither.res.isError).toBe(true);
    const unknown = await call(client, 'send_thread_message', { template: 'no such template', text: 'x' });
    expect(unknown.res.isError).toBe(true);
    const foreign = await connect(other);
    const theirs = await call(foreign, 'send_thread_message', { thread_id: threadId, text: 'hello?' });
    expect(theirs.res.isError).toBe(true);
    expect(JSON.stringify(theirs.res.content)).toContain('not found');
    const theirTurn = await call(foreign, 'get_thread_turn', { thread_id: threadId, turn: 1, wait_seconds: 0 });
    expect(theirTurn.res.isError).toBe(true);
  }, 120_000);
});
