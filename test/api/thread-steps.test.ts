/**
 * A workflow's agent step taking a turn in a thread (decision 0603) on the real stack: the step named by
 * `{{input.thread_id}}` answers with the thread's earlier turns in its context, its exchange (tool call, result,
 * reply) appears in the thread's messages and the next API message sees it; the thread's usage counts it. Another
 * user's thread or an unknown one fails the step with nothing written; a literal unknown id is refused when the
 * workflow is saved. A thread with a running turn makes the step wait for it. A retried accept or end (an activity
 * attempt repeated after a lost worker) takes no second turn and writes nothing twice.
 */
import { endAnswered } from '../../shared/threads/end-turn';
import { joinThreadAsStep } from '../../shared/threads/step-turn';
import { runsCollection } from '../../db/runs';
import { acceptTurn } from '../../db/threads';
import { Reconciler } from '../../temporal/reconciler';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import type { RecordedRequest, Script, ScriptedReply } from '../helpers/llm-server';
import { silentLogger, uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, startRun, waitForStatus, isTerminal } from '../helpers/workflows';

type Body = Record<string, unknown>;

describe('agent steps in threads', () => {
  let g: GraphStack;
  let other: TestUser;

  beforeAll(async () => {
    g = await startGraphStack({ EVENTS_POLL_MS: '50' });
    other = await createTestUser(g.api.database.db);
  }, 60_000);
  afterAll(() => g?.stop());

  const agent = async (script: Script, owner = g.user, fields: Body = {}) => {
    const model = g.llm.script(uniqueId('step-'), script);
    const tpl = await insertTemplate(g.api.database.db, owner.id, {
      step_type: 'agent',
      name: uniqueId('agent '),
      default_prompt: 'You are a helpful assistant.',
      default_tools: [],
      default_tasks: [],
      model: `openai:${model.model}`,
      ...fields,
    });
    return { tpl, model };
  };
  const newThread = async (templateId: string, body: Body = {}, user = g.user) => {
    const res = await g.api.http
      .post('/api/v1/threads')
      .set(user.auth)
      .send({ template: templateId, ...body });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const send = (id: string, text: string, wait = 30) =>
    g.api.http.post(`/api/v1/threads/${id}/messages?wait=${wait}`).set(g.user.auth).send({ text });
  const messages = async (id: string, user = g.user) => {
    const res = await g.api.http.get(`/api/v1/threads/${id}/messages?limit=200`).set(user.auth);
    expect(res.status).toBe(200);
    return res.body.data as Body[];
  };
  const getThread = async (id: string, user = g.user) =>
    (await g.api.http.get(`/api/v1/threads/${id}`).set(user.auth)).body.data as Body;
  const texts = (req: RecordedRequest) =>
    (req.body.messages as { role: string; content: unknown }[])
      .filter((m) => m.role !== 'system')
      .map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
  /** A workflow of one agent step on `templateId` that talks in `{{input.thread_id}}`. */
  const threadWorkflow = (templateId: string, user = g.user, step: Body = {}) =>
    createWorkflow(g.api, user, {
      name: uniqueId('in thread '),
      steps: [{ id: 'ask', template_id: templateId, thread: '{{input.thread_id}}', input: '{{input.text}}', ...step }],
    });

  it("answers in the thread with its context; the exchange is the thread's and the next message sees it", async () => {
    const chat = await agent([{ text: 'Hello Ada!' }, { text: 'You asked for 6*7: it is 42.' }]);
    const thread = await newThread(chat.tpl._id);
    expect((await send(thread, 'Hi, I am Ada.')).body.data.reply.text).toBe('Hello Ada!');

    // Another template (with a tool) answers in the thread.
    const step = await agent(
      [{ toolCalls: [{ name: 'calculator', args: { expression: '6*7' } }] }, { text: 'Ada, 6*7 is 42.' }],
      g.user,
      { default_tools: ['calculator'] },
    );
    const wf = await threadWorkflow(step.tpl._id);
    const runId = await startRun(g.api, g.user, wf, { thread_id: thread, text: 'What is 6*7?' });
    const status = await waitForStatus(g.api, g.user, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');
    expect(status.outputs.ask).toBe('Ada, 6*7 is 42.');

    // The step was given the thread's earlier turn, then its own input as the user message.
    expect(texts(step.model.requests[0]!)).toEqual(['user:Hi, I am Ada.', 'assistant:Hello Ada!', 'user:What is 6*7?']);

    // Its exchange is in the thread: the message names the run and the step; tool call, result and reply follow.
    const conv = await messages(thread);
    expect(conv.map((m) => [m.turn, m.role, m.text ?? null])).toEqual([
      [1, 'user', 'Hi, I am Ada.'],
      [1, 'assistant', 'Hello Ada!'],
      [2, 'user', 'What is 6*7?'],
      [2, 'assistant', null],
      [2, 'tool', null],
      [2, 'assistant', 'Ada, 6*7 is 42.'],
    ]);
    expect(conv[2]).toMatchObject({ run_id: runId, step_id: 'ask', status: 'completed' });
    expect(conv[2]!.usage).toMatchObject({ llm_calls: 2, input_tokens: 22, output_tokens: 14 });
    expect(conv[4]!.tool).toMatchObject({ name: 'calculator', output: { result: 42 }, is_error: false });
    expect(conv[5]).toMatchObject({ final: true });
    const t = await getThread(thread);
    expect(t).toMatchObject({ turns: 2, running_turn: null, message_count: 6, last_message_id: conv[5]!.id });
    expect(t.usage).toMatchObject({ llm_calls: 3, input_tokens: 33, output_tokens: 21 });

    // The next message through the API sees the step's exchange (the tool call with its result, and the reply).
    const next = await send(thread, 'And what did you compute?');
    expect(next.body.data).toMatchObject({ turn: 3, status: 'completed' });
    const seen = texts(chat.model.requests[1]!);
    expect(seen[0]).toBe('user:Hi, I am Ada.');
    expect(seen).toContain('user:What is 6*7?');
    expect(seen).toContain('assistant:Ada, 6*7 is 42.');
    expect(JSON.stringify(chat.model.requests[1]!.body.messages)).toContain('calculator');
    expect(seen[seen.length - 1]).toBe('user:And what did you compute?');

    // The usage report counts the step's calls for the thread (and for the workflow).
    const byThread = (await g.api.http.get('/api/v1/usage?group_by=thread,workflow').set(g.user.auth)).body.data
      .rows as Body[];
    expect(byThread).toContainEqual(expect.objectContaining({ thread_id: thread, workflow_id: wf, calls: 2 }));
    expect(byThread).toContainEqual(expect.objectContaining({ thread_id: thread, workflow_id: thread, calls: 2 }));

    // A retried accept (the same run and step) finds its turn; a repeated end writes nothing twice.
    const again = await joinThreadAsStep(
      { db: g.api.database.db },
      {
        ownerId: g.user.id,
        runId,
        stepId: 'ask',
        threadId: thread,
        text: 'What is 6*7?',
      },
    );
    expect(again).toMatchObject({ kind: 'joined', thread: { id: thread, turn: 2 } });
    await endAnswered(
      { db: g.api.database.db },
      {
        threadId: thread,
        ownerId: g.user.id,
        turn: 2,
        runId,
        stepId: 'ask',
        state: { status: 'completed', error: null, usage: { llm_calls: 2, input_tokens: 22, output_tokens: 14 } },
      },
    );
    const after = await getThread(thread);
    expect(after).toMatchObject({ turns: 3, message_count: 8 });
    expect((after.usage as Body).llm_calls).toBe(4);
    expect(await messages(thread)).toHaveLength(8);
  }, 120_000);

  it("another user's thread or an unknown one fails the step and writes nothing; a literal unknown id is a 400", async () => {
    const chat = await agent([{ text: 'mine' }], other);
    const theirs = await newThread(chat.tpl._id, {}, other);
    const step = await agent([{ text: 'should not be called' }]);
    const wf = await threadWorkflow(step.tpl._id);
    for (const id of [theirs, 'thr_doesnotexist']) {
      const runId = await startRun(g.api, g.user, wf, { thread_id: id, text: 'hello' });
      const status = await waitForStatus(g.api, g.user, runId, isTerminal, 60_000);
      expect(status.status).toBe('failed');
      expect(status.error).toMatchObject({ step_id: 'ask', code: 'thread_not_found' });
      expect(status.error!.message).toContain(`thread ${id} not found`);
    }
    expect(step.model.requests).toHaveLength(0);
    expect(await getThread(theirs, other)).toMatchObject({ turns: 0, message_count: 0, running_turn: null });
    expect(await messages(theirs, other)).toEqual([]);

    // Written as a literal, the thread must be one of the owner's when the workflow is saved.
    const res = await g.api.http
      .post('/api/v1/workflows')
      .set(g.user.auth)
      .send({ name: uniqueId('bad '), steps: [{ id: 'ask', template_id: step.tpl._id, thread: theirs, input: 'x' }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(`steps[0] (ask).thread: unknown thread "${theirs}"`);
    const mine = await newThread(step.tpl._id);
    const ok = await g.api.http
      .post('/api/v1/workflows')
      .set(g.user.auth)
      .send({ name: uniqueId('ok '), steps: [{ id: 'ask', template_id: step.tpl._id, thread: mine, input: 'x' }] });
    expect(ok.status).toBe(201);
    // Only agent steps take it.
    const action = await g.api.http
      .post('/api/v1/workflows')
      .set(g.user.auth)
      .send({ name: uniqueId('act '), steps: [{ id: 'a', template_id: g.tpl.delay._id, thread: mine }] });
    expect(action.status).toBe(400);
    expect(action.body.error).toContain('only agent steps take thread');
  }, 120_000);

  it('waits for the running turn, then takes the next one (or gives up after its timeout); a thread over its budget fails the step', async () => {
    let release!: (r: ScriptedReply) => void;
    const held = new Promise<ScriptedReply>((resolve) => (release = resolve));
    const chat = await agent([{ hold: held }]);
    const thread = await newThread(chat.tpl._id, { overrides: { budget: { max_tokens: 30 } } });
    const first = await send(thread, 'Tell me a long story.', 0);
    expect(first.status).toBe(202);
    await chat.model.waitForRequests(1);

    const step = await agent([{ text: 'A short one, then.' }]);
    const wf = await threadWorkflow(step.tpl._id);
    const runId = await startRun(g.api, g.user, wf, { thread_id: thread, text: 'Make it short.' });
    await waitForStatus(g.api, g.user, runId, (s) => s.steps[0]?.status === 'running');
    // A step that may wait only 2 s gives up with `thread_busy`, having written nothing.
    const impatient = await threadWorkflow(step.tpl._id, g.user, { timeout_seconds: 2 });
    const gaveUp = await startRun(g.api, g.user, impatient, { thread_id: thread, text: 'Now!' });
    const busy = await waitForStatus(g.api, g.user, gaveUp, isTerminal, 60_000);
    expect(busy.error).toMatchObject({ step_id: 'ask', code: 'thread_busy' });
    expect(busy.error!.message).toContain('turn 1 (run ');
    release({ text: 'Once upon a time…' });

    const status = await waitForStatus(g.api, g.user, runId, isTerminal, 60_000);
    expect(status.status).toBe('completed');
    // The step's turn came after the API's: it was given that turn's reply.
    expect(texts(step.model.requests[0]!)).toEqual([
      'user:Tell me a long story.',
      'assistant:Once upon a time…',
      'user:Make it short.',
    ]);
    expect((await messages(thread)).map((m) => [m.turn, m.role])).toEqual([
      [1, 'user'],
      [1, 'assistant'],
      [2, 'user'],
      [2, 'assistant'],
    ]);

    // The two turns used 36 tokens of the thread's 30: the next step's turn is refused, nothing written.
    const over = await startRun(g.api, g.user, wf, { thread_id: thread, text: 'Another?' });
    const refused = await waitForStatus(g.api, g.user, over, isTerminal, 60_000);
    expect(refused.error).toMatchObject({ step_id: 'ask', code: 'thread_budget_exceeded' });
    expect(await getThread(thread)).toMatchObject({ turns: 2, message_count: 4, running_turn: null });
  }, 120_000);

  it("a step's running turn shows on the thread; deleting the thread or cancelling the turn is a 409 naming the run", async () => {
    let release!: (r: ScriptedReply) => void;
    const held = new Promise<ScriptedReply>((resolve) => (release = resolve));
    const step = await agent([{ hold: held }]);
    const thread = await newThread(step.tpl._id);
    const wf = await threadWorkflow(step.tpl._id);
    const runId = await startRun(g.api, g.user, wf, { thread_id: thread, text: 'Slow one.' });
    await step.model.waitForRequests(1);
    expect((await getThread(thread)).running_turn).toEqual({ turn: 1, run_id: runId, step_id: 'ask' });
    const del = await g.api.http.delete(`/api/v1/threads/${thread}`).set(g.user.auth);
    expect(del.status).toBe(409);
    expect(del.headers['x-error-code']).toBe('turn_running');
    expect(del.body.error).toContain(`step ask of run ${runId}`);
    const cancel = await g.api.http.post(`/api/v1/threads/${thread}/turns/1/cancel`).set(g.user.auth);
    expect(cancel.status).toBe(409);
    expect(cancel.headers['x-error-code']).toBe('turn_running');
    // A message meanwhile: refused under `reject`, naming the step's run.
    const busy = await send(thread, 'Me too?', 0);
    expect(busy.status).toBe(409);
    expect(busy.body.error).toContain(runId);
    release({ text: 'Done.' });
    expect((await waitForStatus(g.api, g.user, runId, isTerminal, 60_000)).status).toBe('completed');
    expect((await getThread(thread)).running_turn).toBeNull();
    // Deleting the thread afterwards leaves the workflow's run alone.
    expect((await g.api.http.delete(`/api/v1/threads/${thread}`).set(g.user.auth)).status).toBe(200);
    const run = await g.api.http.get(`/api/v1/workflows/runs/${runId}/status`).set(g.user.auth);
    expect(run.status).toBe(200);
    expect(run.body.data.status).toBe('completed');
  }, 120_000);

  it.each(['an API message', "another workflow's step"])(
    'a step turn whose run was terminated is ended by the next turn taker (%s), which then takes its turn',
    async (next) => {
      const step = await agent([{ hold: new Promise<ScriptedReply>(() => undefined) }]);
      const chat = await agent([{ text: 'Back to you.' }]);
      const thread = await newThread(chat.tpl._id);
      const wf = await threadWorkflow(step.tpl._id);
      const runId = await startRun(g.api, g.user, wf, { thread_id: thread, text: 'Never answered.' });
      await step.model.waitForRequests(1);
      await g.api.temporal.workflow.getHandle(runId).terminate('test: no workflow code runs after this');
      // The reconciler records the run's end (as if the run had been quiet for an hour); the turn is still the step's:
      // no workflow code ended it.
      await runsCollection(g.api.database.db).updateOne(
        { _id: runId },
        { $set: { updated_at: new Date(Date.now() - 3600_000) } },
      );
      const reconciler = new Reconciler({
        db: g.api.database.db,
        temporal: g.api.temporal,
        logger: silentLogger,
        quietMs: 1_000,
      });
      expect((await reconciler.pass()).ended).toContain(runId);
      expect((await getThread(thread)).running_turn).toMatchObject({ turn: 1, step_id: 'ask' });
      if (next === 'an API message') {
        const sent = await send(thread, 'Hello?');
        expect(sent.status).toBe(200);
        expect(sent.body.data).toMatchObject({ turn: 2, status: 'completed' });
      } else {
        const other = await startRun(g.api, g.user, await threadWorkflow(chat.tpl._id), {
          thread_id: thread,
          text: 'Hello?',
        });
        expect((await waitForStatus(g.api, g.user, other, isTerminal, 60_000)).status).toBe('completed');
      }
      const conv = await messages(thread);
      expect(conv[0]).toMatchObject({ turn: 1, role: 'user', run_id: runId, step_id: 'ask' });
      expect(conv[0]!.status).not.toBe('running');
      expect(conv.map((m) => [m.turn, m.role])).toEqual([
        [1, 'user'],
        [2, 'user'],
        [2, 'assistant'],
      ]);
    },
    120_000,
  );

  it('a turn taken whose message was never written (an attempt lost between the two writes) gets it on retry', async () => {
    const chat = await agent([{ text: 'x' }]);
    const thread = await newThread(chat.tpl._id);
    const db = g.api.database.db;
    const runId = `run_${uniqueId('lost')}`;
    const accepted = await acceptTurn(db, {
      ownerId: g.user.id,
      threadId: thread,
      after: undefined,
      enqueue: false,
      runId,
      stepId: 'ask',
      messageId: (turn) => `m${turn}.0`,
    });
    expect(accepted).toEqual({ kind: 'started', turn: 1 });
    const req = { ownerId: g.user.id, runId, stepId: 'ask', threadId: thread, text: 'hello' };
    expect(await joinThreadAsStep({ db }, req)).toMatchObject({ kind: 'joined', thread: { turn: 1 } });
    expect(await joinThreadAsStep({ db }, req)).toMatchObject({ kind: 'joined', thread: { turn: 1 } });
    // Another step of the same run waits: the turn is this step's.
    expect(await joinThreadAsStep({ db }, { ...req, stepId: 'other' })).toMatchObject({ kind: 'busy' });
    const conv = await messages(thread);
    expect(conv.map((m) => [m.id, m.text, m.step_id])).toEqual([['m1.0', 'hello', 'ask']]);
    expect(await getThread(thread)).toMatchObject({
      turns: 1,
      running_turn: { turn: 1, run_id: runId, step_id: 'ask' },
    });
  }, 60_000);
});
