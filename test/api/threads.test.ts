/**
 * Threads on the real stack (Temporal, the database, a worker, the scripted model server): a turn answered with the
 * model's reply and the earlier turns in its context; CRUD and another user's 404s; exactly once under a retried
 * POST (same Idempotency-Key → same turn); concurrent POSTs under `reject` (one wins) and `enqueue` (all answered, in
 * order); a stale `after`; the thread budget; the SSE stream resumed with Last-Event-ID; fork; and a delete that
 * leaves nothing of the thread in any collection.
 */
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { readSse } from '../helpers/sse';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { insertTemplate } from '../helpers/workflows';
import type { RecordedRequest, Script } from '../helpers/llm-server';

type Body = Record<string, unknown>;

describe('threads', () => {
  let g: GraphStack;
  let base: string;
  let other: TestUser;

  beforeAll(async () => {
    g = await startGraphStack({ EVENTS_POLL_MS: '50' });
    base = await g.api.listen();
    other = await createTestUser(g.api.database.db);
  }, 60_000);
  afterAll(() => g?.stop());

  /** An agent template on a fresh scripted model; its name and the model's recorded requests. */
  const agent = async (script: Script, fields: Body = {}) => {
    const model = g.llm.script(uniqueId('thr-'), script);
    const tpl = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('chat agent '),
      default_prompt: 'You are a friendly assistant.',
      default_tools: [],
      default_tasks: [],
      model: `openai:${model.model}`,
      ...fields,
    });
    return { tpl, model };
  };
  const create = async (body: Body, user = g.user) => {
    const res = await g.api.http.post('/api/v1/threads').set(user.auth).send(body);
    return res;
  };
  const send = (id: string, body: Body, opts: { wait?: number; key?: string; user?: TestUser } = {}) => {
    let req = g.api.http
      .post(`/api/v1/threads/${id}/messages${opts.wait !== undefined ? `?wait=${opts.wait}` : ''}`)
      .set((opts.user ?? g.user).auth);
    if (opts.key) req = req.set('Idempotency-Key', opts.key);
    return req.send(body);
  };
  const messages = async (id: string) => {
    const res = await g.api.http.get(`/api/v1/threads/${id}/messages?limit=200`).set(g.user.auth);
    expect(res.status).toBe(200);
    return res.body.data as Body[];
  };
  const getThread = async (id: string) => {
    const res = await g.api.http.get(`/api/v1/threads/${id}`).set(g.user.auth);
    expect(res.status).toBe(200);
    return res.body.data as Body;
  };
  /** Polls the thread until no turn runs and none waits. */
  const idle = async (id: string, timeoutMs = 60_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const t = await getThread(id);
      if (t.running_turn === null && t.queued === 0) return t;
      if (Date.now() > until) throw new Error(`thread ${id} still busy: ${JSON.stringify(t)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const userTexts = (req: RecordedRequest) =>
    (req.body.messages as { role: string; content: unknown }[])
      .filter((m) => m.role === 'user' || m.role === 'assistant')
      .map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);

  it('answers a turn with the reply; the next turn gets the earlier ones as context', async () => {
    const { tpl, model } = await agent([{ text: 'Hello Ada!' }, { text: 'Your name is Ada.' }]);
    const created = await create({ template: tpl.name, title: 'First chat', metadata: { team: 'blue' } });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect(created.body.data).toMatchObject({ template_id: tpl._id, turns: 0, running_turn: null, message_count: 0 });

    const first = await send(id, { text: 'Hi, I am Ada.' }, { wait: 30 });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ message_id: 'm1.0', turn: 1, status: 'completed' });
    expect(first.body.data.reply).toMatchObject({ role: 'assistant', text: 'Hello Ada!', final: true });

    const second = await send(id, { text: 'What is my name?', after: first.body.data.reply.id }, { wait: 30 });
    expect(second.status).toBe(200);
    expect(second.body.data.reply.text).toBe('Your name is Ada.');
    // The second call saw the first turn, then the new message; the system prompt is the template's.
    expect(userTexts(model.requests[1]!)).toEqual([
      'user:Hi, I am Ada.',
      'assistant:Hello Ada!',
      'user:What is my name?',
    ]);

    const thread = await idle(id);
    expect(thread).toMatchObject({ turns: 2, message_count: 4, last_message_id: second.body.data.reply.id });
    expect(thread.usage).toMatchObject({ llm_calls: 2, input_tokens: 22, output_tokens: 14 });
    const conv = await messages(id);
    expect(conv.map((m) => [m.id, m.role, m.text])).toEqual([
      ['m1.0', 'user', 'Hi, I am Ada.'],
      [first.body.data.reply.id, 'assistant', 'Hello Ada!'],
      ['m2.0', 'user', 'What is my name?'],
      [second.body.data.reply.id, 'assistant', 'Your name is Ada.'],
    ]);
    expect(conv[0]).toMatchObject({ status: 'completed', usage: { llm_calls: 1 } });

    // A thread's turns stay out of the run search; the run itself is an ordinary run.
    const runs = await g.api.http.get('/api/v1/runs').set(g.user.auth);
    expect((runs.body.data as Body[]).map((r) => r.run_id)).not.toContain(first.body.data.run_id);
    const status = await g.api.http.get(`/api/v1/workflows/runs/${first.body.data.run_id}/status`).set(g.user.auth);
    expect(status.body.data.status).toBe('completed');
  }, 90_000);

  it('gives each turn the recent turns that fit the template’s context_tokens', async () => {
    const model = g.llm.script(uniqueId('window-'), (_req, i) => ({ text: `reply ${i + 1}` }));
    const tpl = await g.api.http
      .post('/api/v1/agents')
      .set(g.user.auth)
      .send({
        name: uniqueId('windowed '),
        default_prompt: 'Answer.',
        model: `openai:${model.model}`,
        context_tokens: 256,
      });
    expect(tpl.status).toBe(201);
    expect(tpl.body.data.context_tokens).toBe(256);
    const id = (await create({ template: tpl.body.data.id })).body.data.id as string;
    // About 150 tokens a message: one earlier turn fits the window, two do not.
    for (const n of [1, 2, 3]) await send(id, { text: `m${n} ` + 'x'.repeat(600), policy: 'enqueue' }, { wait: 30 });
    await idle(id);
    expect(userTexts(model.requests[1]!).map((t) => t.slice(0, 9))).toEqual(['user:m1 x', 'assistant', 'user:m2 x']);
    // Turn 3: turns 1–2 outgrew the window, so a compaction call summarised them (thread-compaction.test.ts) and
    // the answer was given the summary and the new message only.
    expect(model.requests).toHaveLength(4);
    expect(userTexts(model.requests[3]!).map((t) => t.slice(0, 9))).toEqual(['user:m3 x']);
  }, 60_000);

  it('lists, filters, changes; another user gets 404 everywhere; bad input gets clear errors', async () => {
    const { tpl } = await agent([{ text: 'ok' }]);
    const a = (await create({ template: tpl._id, title: 'Invoices Q3', metadata: { project: 'p1' } })).body.data;
    const b = (await create({ template: tpl._id, title: 'Other', metadata: { project: 'p2' } })).body.data;
    const list = await g.api.http.get(`/api/v1/threads?metadata=project:p1&template_id=${tpl._id}`).set(g.user.auth);
    expect((list.body.data as Body[]).map((t) => t.id)).toEqual([a.id]);
    const search = await g.api.http.get('/api/v1/threads?q=invoices').set(g.user.auth);
    expect((search.body.data as Body[]).map((t) => t.id)).toContain(a.id);
    expect((search.body.data as Body[]).map((t) => t.id)).not.toContain(b.id);
    const patched = await g.api.http.patch(`/api/v1/threads/${a.id}`).set(g.user.auth).send({ title: 'Renamed' });
    expect(patched.body.data.title).toBe('Renamed');

    const foreign = [
      g.api.http.get(`/api/v1/threads/${a.id}`).set(other.auth),
      g.api.http.patch(`/api/v1/threads/${a.id}`).set(other.auth).send({ title: 'x' }),
      g.api.http.delete(`/api/v1/threads/${a.id}`).set(other.auth),
      g.api.http.post(`/api/v1/threads/${a.id}/messages`).set(other.auth).send({ text: 'hi' }),
      g.api.http.get(`/api/v1/threads/${a.id}/messages`).set(other.auth),
      g.api.http.post(`/api/v1/threads/${a.id}/fork`).set(other.auth).send({ at: 'm1.0' }),
      g.api.http.post(`/api/v1/threads/${a.id}/turns/1/cancel`).set(other.auth),
    ];
    for (const res of await Promise.all(foreign)) expect(res.status).toBe(404);
    const sse = await readSse(`${base}/api/v1/threads/${a.id}/events`, { headers: other.auth, timeoutMs: 5_000 });
    expect(sse.status).toBe(404);
    const otherList = await g.api.http.get('/api/v1/threads').set(other.auth);
    expect(otherList.body.data).toEqual([]);

    expect((await create({ template: 'no such template' })).headers['x-error-code']).toBe('unknown_template');
    expect((await send(a.id, { text: '' })).status).toBe(400);
    expect((await send(a.id, { text: '   ' })).status).toBe(400);
    const big = await send(a.id, { text: 'é'.repeat(20_000) });
    expect(big.status).toBe(413);
    expect(big.headers['x-error-code']).toBe('message_too_large');
    // Nothing of the refused messages was written.
    expect(await getThread(a.id)).toMatchObject({ turns: 0, message_count: 0 });
  }, 60_000);

  it('a POST retried with the same Idempotency-Key gives the same message and turn, never a second', async () => {
    const { tpl, model } = await agent([{ text: 'once' }]);
    const id = (await create({ template: tpl._id })).body.data.id as string;
    const key = uniqueId('key-');
    const [r1, r2] = await Promise.all([send(id, { text: 'hello' }, { key }), send(id, { text: 'hello' }, { key })]);
    const ok = [r1, r2].filter((r) => r.status === 202 || r.status === 200);
    // A repeat that arrives while the first is still writing may be told to retry (409 in_flight), never a turn.
    for (const r of [r1, r2]) expect([200, 202, 409]).toContain(r.status);
    expect(new Set(ok.map((r) => r.body.data.run_id)).size).toBe(1);
    const again = await send(id, { text: 'hello' }, { key, wait: 30 });
    expect(again.body.data).toMatchObject({ turn: 1, message_id: 'm1.0', run_id: ok[0]!.body.data.run_id });
    expect(again.body.data.reply.text).toBe('once');
    const mismatch = await send(id, { text: 'another body' }, { key });
    expect(mismatch.status).toBe(422);
    expect((await idle(id)).turns).toBe(1);
    expect(model.requests).toHaveLength(1);
  }, 60_000);

  it('concurrent POSTs: under reject exactly one starts; under enqueue all are answered in order', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { tpl, model } = await agent((req, i) =>
      i === 0 ? { hold: held.then(() => ({ text: 'reply 1' })) } : { text: `reply ${i + 1}` },
    );
    const id = (await create({ template: tpl._id })).body.data.id as string;
    const rejects = await Promise.all([1, 2, 3, 4].map((n) => send(id, { text: `r${n}` })));
    expect(rejects.filter((r) => r.status === 202)).toHaveLength(1);
    const refused = rejects.filter((r) => r.status === 409);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r.headers['x-error-code']).toBe('turn_running');
    expect(refused[0]!.body.error).toContain('turn 1');

    const queued = await Promise.all([1, 2, 3].map((n) => send(id, { text: `q${n}`, policy: 'enqueue' })));
    for (const r of queued) expect(r.body.data.status).toBe('queued');
    expect(queued.map((r) => r.body.data.turn).sort()).toEqual([2, 3, 4]);
    // A queued message's `?wait=` holds its answer through the turns before it until its own turn has ended.
    const waiting = send(id, { text: 'q4', policy: 'enqueue' }, { wait: 60 }).then((r) => r);
    for (const until = Date.now() + 30_000; ((await getThread(id)).queued as number) < 4;) {
      if (Date.now() > until) throw new Error('the fifth message was not queued');
      await new Promise((r) => setTimeout(r, 50));
    }
    release();
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body.data).toMatchObject({ turn: 5, status: 'completed', reply: { text: 'reply 5' } });
    await idle(id);
    const conv = await messages(id);
    const users = conv.filter((m) => m.role === 'user');
    expect(users.map((m) => m.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed']);
    // Each turn ran after the one before it: the model saw turn n's message after turn n-1's reply.
    expect(model.requests).toHaveLength(5);
    for (let n = 1; n < 5; n++) {
      const seen = userTexts(model.requests[n]!);
      expect(seen[seen.length - 1]).toBe(`user:${users[n]!.text as string}`);
      expect(seen).toContain(`assistant:reply ${n}`);
    }
  }, 90_000);

  it('refuses a stale `after` and a thread over its budget, with the numbers', async () => {
    const { tpl } = await agent([{ text: 'a1', usage: { input: 60, output: 50 } }]);
    const id = (await create({ template: tpl._id, overrides: { budget: { max_tokens: 150 } } })).body.data.id as string;
    const first = await send(id, { text: 'one' }, { wait: 30 });
    expect(first.status).toBe(200);
    const stale = await send(id, { text: 'two', after: 'm1.0' });
    expect(stale.status).toBe(409);
    expect(stale.headers['x-error-code']).toBe('stale_after');
    const second = await send(id, { text: 'two', after: first.body.data.reply.id }, { wait: 30 });
    expect(second.status).toBe(200);
    const over = await send(id, { text: 'three', after: second.body.data.reply.id });
    expect(over.status).toBe(422);
    expect(over.headers['x-error-code']).toBe('thread_budget_exceeded');
    expect(over.body.error).toContain('150');
    expect(over.body.error).toContain('220');
    expect((await getThread(id)).turns).toBe(2);
  }, 60_000);

  it('a turn over its turn budget fails naming the budget; tool calls and results are in the conversation', async () => {
    // Asks the calculator first, answers once the model has its result.
    const { tpl } = await agent(
      (req) =>
        (req.body.messages as { role: string }[]).at(-1)?.role === 'tool'
          ? { text: 'It is 42.' }
          : { toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }] },
      { default_tools: ['calculator'] },
    );
    const tight = (await create({ template: tpl._id, overrides: { budget: { turn_max_model_calls: 1 } } })).body.data
      .id as string;
    const refused = await send(tight, { text: 'What is 6*7?' }, { wait: 30 });
    expect(refused.status).toBe(200);
    expect(refused.body.data).toMatchObject({ status: 'failed', reply: null });
    const [user] = await messages(tight);
    expect(user).toMatchObject({ role: 'user', status: 'failed', error: { reason: 'budget_exceeded' } });
    expect((user!.error as Body).message).toContain('max_model_calls is 1');

    const roomy = (await create({ template: tpl._id })).body.data.id as string;
    const answered = await send(roomy, { text: 'What is 6*7?' }, { wait: 30 });
    expect(answered.body.data.reply.text).toBe('It is 42.');
    const conv = await messages(roomy);
    expect(conv.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(conv[1]!.tool_calls).toEqual([expect.objectContaining({ name: 'calculator', args: { expression: '6*7' } })]);
    expect(conv[2]!.tool).toMatchObject({ name: 'calculator', output: { result: 42 }, is_error: false });
    expect((await getThread(roomy)).usage).toMatchObject({ llm_calls: 2 });
  }, 60_000);

  it('streams the turns’ events; a reconnect with Last-Event-ID gets every event exactly once', async () => {
    const { tpl } = await agent([{ text: 'first answer' }, { text: 'second answer' }]);
    const id = (await create({ template: tpl._id })).body.data.id as string;
    await send(id, { text: 'one' }, { wait: 30 });
    await send(id, { text: 'two', policy: 'enqueue' }, { wait: 30 });
    await idle(id);
    const url = `${base}/api/v1/threads/${id}/events`;
    const ended = (n: number) => {
      let seen = 0;
      return (e: { event: string }) => e.event === 'run.ended' && ++seen === n;
    };
    const all = await readSse(url, { headers: g.user.auth, stopWhen: ended(2), timeoutMs: 30_000 });
    expect(all.status).toBe(200);
    const ids = all.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(all.events.filter((e) => e.event === 'run.ended')).toHaveLength(2);
    expect(all.events.map((e) => e.data.thread_turn)).toEqual([...all.events.map((e) => e.data.thread_turn)].sort());
    // Cut in the middle, then resumed after the last event received.
    const cut = Math.floor(all.events.length / 2);
    const head = await readSse(url, { headers: g.user.auth, stopAfter: cut, timeoutMs: 30_000 });
    const lastId = head.events[head.events.length - 1]!.id!;
    const tail = await readSse(url, {
      headers: { ...g.user.auth, 'Last-Event-ID': lastId },
      stopWhen: (e) => e.event === 'run.ended' && e.data.thread_turn === 2,
      timeoutMs: 30_000,
    });
    expect([...head.events, ...tail.events].map((e) => e.id)).toEqual(ids);
  }, 90_000);

  it('cancels a running turn (the next queued one starts) and a queued one (it never starts); live events', async () => {
    const { tpl, model } = await agent((_req, i) =>
      i === 0 ? { hold: new Promise(() => undefined) } : { text: `answer ${i + 1}` },
    );
    const id = (await create({ template: tpl._id, overrides: { policy: 'enqueue' } })).body.data.id as string;
    // Open before the first message: the stream waits for the turn, then delivers its events as they happen.
    const live = readSse(`${base}/api/v1/threads/${id}/events`, {
      headers: g.user.auth,
      stopWhen: (e) => e.event === 'run.ended' && e.data.thread_turn === 2,
      timeoutMs: 60_000,
    });
    // A turn still running when the wait is over: 202, running, no reply.
    const first = await send(id, { text: 'one' }, { wait: 1 });
    expect(first.status).toBe(202);
    expect(first.body.data).toMatchObject({ turn: 1, status: 'running', reply: null });
    await model.waitForRequests(1, 30_000);
    const second = await send(id, { text: 'two' });
    const third = await send(id, { text: 'three' });
    expect([second.body.data.status, third.body.data.status]).toEqual(['queued', 'queued']);
    const dropped = await g.api.http.post(`/api/v1/threads/${id}/turns/3/cancel`).set(g.user.auth);
    expect(dropped.status).toBe(202);
    expect(dropped.body.data).toMatchObject({ turn: 3, run_id: null });
    const cancelled = await g.api.http.post(`/api/v1/threads/${id}/turns/1/cancel`).set(g.user.auth);
    expect(cancelled.body.data).toMatchObject({ turn: 1, run_id: first.body.data.run_id });
    await idle(id);
    const users = (await messages(id)).filter((m) => m.role === 'user');
    expect(users.map((m) => [m.text, m.status])).toEqual([
      ['one', 'cancelled'],
      ['two', 'completed'],
      ['three', 'cancelled'],
    ]);
    expect(model.requests).toHaveLength(2);
    const again = await g.api.http.post(`/api/v1/threads/${id}/turns/2/cancel`).set(g.user.auth);
    expect(again.status).toBe(409);
    const stream = await live;
    expect(stream.events.filter((e) => e.event === 'run.ended').map((e) => e.data.thread_turn)).toEqual([1, 2]);
  }, 90_000);

  it('forks at a message: the conversation up to there, no model call; an unknown point is refused', async () => {
    const { tpl, model } = await agent([{ text: 'A1' }, { text: 'A2' }, { text: 'B2' }]);
    const id = (await create({ template: tpl._id, title: 'source' })).body.data.id as string;
    const r1 = await send(id, { text: 'one' }, { wait: 30 });
    await send(id, { text: 'two', after: r1.body.data.reply.id }, { wait: 30 });
    const calls = model.requests.length;
    const fork = await g.api.http
      .post(`/api/v1/threads/${id}/fork`)
      .set(g.user.auth)
      .send({ at: r1.body.data.reply.id, title: 'retry' });
    expect(fork.status).toBe(201);
    expect(fork.body.data).toMatchObject({ title: 'retry', turns: 1, message_count: 2, running_turn: null });
    expect(model.requests).toHaveLength(calls);
    const forkId = fork.body.data.id as string;
    expect((await messages(forkId)).map((m) => m.text)).toEqual(['one', 'A1']);
    const next = await send(forkId, { text: 'two again', after: r1.body.data.reply.id }, { wait: 30 });
    expect(next.body.data.reply.text).toBe('B2');
    expect(userTexts(model.requests[model.requests.length - 1]!)).toEqual([
      'user:one',
      'assistant:A1',
      'user:two again',
    ]);
    const bad = await g.api.http.post(`/api/v1/threads/${id}/fork`).set(g.user.auth).send({ at: 'm9.0' });
    expect(bad.status).toBe(422);
    expect(bad.headers['x-error-code']).toBe('unknown_message');
  }, 90_000);

  it('delete cancels the running turn and leaves nothing of the thread in any collection', async () => {
    const { tpl } = await agent((req, i) => (i === 0 ? { text: 'done' } : { hold: new Promise(() => undefined) }));
    const id = (await create({ template: tpl._id })).body.data.id as string;
    const first = await send(id, { text: 'one' }, { wait: 30 });
    const second = await send(id, { text: 'two', after: first.body.data.reply.id });
    expect(second.status).toBe(202);
    await send(id, { text: 'three', policy: 'enqueue' }, { key: uniqueId('k-') });
    const runIds = [first.body.data.run_id as string, second.body.data.run_id as string];
    const del = await g.api.http.delete(`/api/v1/threads/${id}`).set(g.user.auth);
    expect(del.status).toBe(200);
    expect((await g.api.http.get(`/api/v1/threads/${id}`).set(g.user.auth)).status).toBe(404);
    // Let a late write of the cancelled turn land, if any would.
    await new Promise((r) => setTimeout(r, 1_000));
    const db = g.api.database.db;
    const needles = [id, ...runIds];
    for (const { name } of await db.listCollections().toArray()) {
      if (name === 'usage_calls' || name === 'usage') continue;
      const docs = await db.collection(name).find({}).toArray();
      const left = docs.filter((d) => needles.some((n) => JSON.stringify(d).includes(n)));
      expect({ name, left }).toEqual({ name, left: [] });
    }
  }, 90_000);
});
