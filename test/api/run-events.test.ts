/**
 * The run event stream over a real socket, against real runs (Temporal, the database, the scripted model, the HTTP
 * sink): the whole log of a run with an agent step, resuming with Last-Event-ID after a disconnect (every event
 * exactly once), heartbeats, many streams at once on one API process, and the refusals before a stream starts.
 */
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { liveHeapBytes } from '../helpers/heap';
import { readSse, type SseEvent } from '../helpers/sse';
import { uniqueId } from '../helpers/stack';
import { createTestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const STREAMS = 50;

describe('run event stream', () => {
  let g: GraphStack;
  let base: string;

  beforeAll(async () => {
    g = await startGraphStack({
      EVENTS_POLL_MS: '50',
      EVENTS_HEARTBEAT_SECONDS: '1',
      EVENTS_MAX_STREAMS_PER_USER: String(STREAMS),
    });
    base = await g.api.listen();
  }, 60_000);
  afterAll(() => g?.stop());

  const eventsUrl = (runId: string, query = '') => `${base}/api/v1/workflows/runs/${runId}/events${query}`;
  const auth = () => ({ Authorization: g.user.auth.Authorization });
  const stream = (runId: string, extra: Record<string, string> = {}, opts: Parameters<typeof readSse>[1] = {}) =>
    readSse(eventsUrl(runId), { ...opts, headers: { ...auth(), ...extra } });
  const summary = (events: SseEvent[]) =>
    events.map((e) => `${e.id} ${e.event} ${(e.data.exec_id as string | undefined) ?? ''}`);

  /** ask (agent: one calculator call, then the answer) → shape (transform) → notify (HTTP, fails once). */
  const agentRun = async () => {
    const model = g.llm.script(uniqueId('events-'), [
      { toolCalls: [{ name: 'calculator', args: { expression: '6 * 7' } }], usage: { input: 20, output: 5 } },
      { text: 'The answer is 42', usage: { input: 30, output: 6 } },
    ]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('agent'),
      default_prompt: 'Answer.',
      default_tools: ['calculator'],
      model: `openai:${model.model}`,
    });
    const path = `/${uniqueId('notify')}`;
    g.sink.route(path, [{ status: 503 }, { status: 200, body: { ok: true } }]);
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('followed'),
      steps: [
        { id: 'ask', template_id: agent._id, input: 'What is 6 times 7?' },
        {
          id: 'shape',
          template_id: g.tpl.transform._id,
          config: { expression: '{"answer": $}', data: '{{steps.ask.output}}' },
        },
        {
          id: 'notify',
          template_id: g.tpl.http_request._id,
          config: { url: g.sink.url(path), method: 'POST', body: '{{steps.shape.output}}' },
        },
      ],
    });
    return startRun(g.api, g.user, wf);
  };

  it('delivers every step change and agent turn of a run, then run.ended, and ends the stream', async () => {
    const runId = await agentRun();
    // A second reader leaves mid-run and comes back with Last-Event-ID.
    const partial = stream(runId, {}, { stopAfter: 3 });
    const live = await stream(runId);
    expect(live.status).toBe(200);
    expect(live.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(live.endedByServer).toBe(true);
    // Increasing ids (seq 2 is the agent activity's own start write: logged by the projection before, so skipped).
    const ids = live.events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(live.events.every((e) => e.data.seq === Number(e.id) && e.data.type === e.event)).toBe(true);
    // The answer's live text comes before the turn's agent.model_call (test/api/live-text.test.ts has the details).
    const text = live.events.filter((e) => e.event === 'agent.text.delta');
    expect(text.map((e) => e.data.text).join('')).toBe('The answer is 42');
    expect(Number(text.at(-1)!.id)).toBeLessThan(
      Number(live.events.filter((e) => e.event === 'agent.model_call')[1]!.id),
    );
    const kinds = live.events
      .filter((e) => e.event !== 'agent.text.delta')
      .map((e) => `${e.event} ${(e.data.exec_id as string | undefined) ?? ''}`);
    expect(kinds).toEqual([
      'step.started ask',
      'agent.model_call ask',
      'agent.tool_call ask',
      'agent.model_call ask',
      'step.completed ask',
      'step.started shape',
      'step.completed shape',
      'step.started notify',
      'step.retrying notify',
      'step.started notify',
      'step.completed notify',
      'run.ended ',
    ]);
    const byKind = (k: string) => live.events.filter((e) => e.event === k).map((e) => e.data);
    expect(byKind('agent.model_call')).toEqual([
      expect.objectContaining({ turn: 1, usage: { input_tokens: 20, output_tokens: 5 }, tool_calls: 1, final: false }),
      expect.objectContaining({ turn: 2, usage: { input_tokens: 30, output_tokens: 6 }, tool_calls: 0, final: true }),
    ]);
    expect(byKind('agent.tool_call')[0]).toMatchObject({ tool: 'calculator', ok: true });
    expect(String(byKind('agent.tool_call')[0]!.summary)).toContain('42');
    expect(byKind('step.retrying')[0]).toMatchObject({ attempt: 1, error: { reason: expect.any(String) } });
    expect(byKind('step.completed')[1]).toMatchObject({ exec_id: 'shape', output: { answer: 'The answer is 42' } });
    expect(byKind('run.ended')[0]).toMatchObject({
      status: 'completed',
      error: null,
      usage: { llm_calls: 2, input_tokens: 50, output_tokens: 11 },
      steps: [
        { id: 'ask', status: 'completed' },
        { id: 'shape', status: 'completed' },
        { id: 'notify', status: 'completed' },
      ],
    });

    const left = await partial;
    const resumed = await stream(runId, { 'Last-Event-ID': left.events.at(-1)!.id! });
    expect(summary([...left.events, ...resumed.events])).toEqual(summary(live.events));

    // Connecting after the end: the whole log again, then the end.
    const later = await stream(runId);
    expect(summary(later.events)).toEqual(summary(live.events));
    // Resuming at the end: nothing more, and the stream ends.
    const atEnd = await stream(runId, { 'Last-Event-ID': String(ids.at(-1)) });
    expect(atEnd.events).toEqual([]);
    expect(atEnd.endedByServer).toBe(true);
  }, 60_000);

  /** first (transform) → gate (approval) → last (transform): waits at the gate until the test approves. */
  const gatedRun = async () => {
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('gated'),
      steps: [
        { id: 'first', template_id: g.tpl.transform._id, config: { expression: '1' } },
        { id: 'gate', template_id: g.tpl.approval._id, config: { message: 'Go on?' } },
        { id: 'last', template_id: g.tpl.transform._id, config: { expression: '2' } },
      ],
    });
    return startRun(g.api, g.user, wf);
  };
  const approve = (runId: string) =>
    g.api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(g.user.auth)
      .send({ step_id: 'gate', approved: true })
      .expect(200);

  it('resumes after a disconnect with Last-Event-ID: every event exactly once', async () => {
    const runId = await gatedRun();
    const first = await stream(runId, {}, { stopWhen: (e) => e.event === 'step.waiting' });
    expect(first.endedByServer).toBe(false);
    const lastId = first.events.at(-1)!.id!;
    await approve(runId);
    const rest = await stream(runId, { 'Last-Event-ID': lastId });
    expect(rest.endedByServer).toBe(true);
    const whole = await stream(runId);
    expect(summary([...first.events, ...rest.events])).toEqual(summary(whole.events));
    expect(whole.events.map((e) => e.event)).toEqual([
      'step.started',
      'step.completed',
      'step.waiting',
      'step.completed',
      'step.started',
      'step.completed',
      'run.ended',
    ]);
    // ?after= resumes the same way for clients that cannot set headers.
    const viaQuery = await readSse(eventsUrl(runId, `?after=${lastId}`), { headers: auth() });
    expect(summary(viaQuery.events)).toEqual(summary(rest.events));
  }, 60_000);

  it('keeps idle streams alive with heartbeat comments', async () => {
    const runId = await gatedRun();
    await waitForStatus(g.api, g.user, runId, (s) => s.status === 'waiting');
    // EVENTS_HEARTBEAT_SECONDS=1: a stream with nothing to say sends `: ping` comments.
    const idle = await stream(runId, {}, { stopAfterComments: 2 });
    expect(idle.comments).toEqual(['ping', 'ping']);
    expect(idle.events.map((e) => e.event)).toEqual(['step.started', 'step.completed', 'step.waiting']);
    await approve(runId);
    await waitForStatus(g.api, g.user, runId, isTerminal);
  }, 60_000);

  it(`serves ${STREAMS} concurrent streams of one run from one process, with bounded memory`, async () => {
    const runId = await gatedRun();
    await waitForStatus(g.api, g.user, runId, (s) => s.status === 'waiting');
    const heapBefore = liveHeapBytes();
    let opened = 0;
    const readers = Array.from({ length: STREAMS }, () => stream(runId, {}, { onOpen: () => opened++ }));
    await waitFor(() => Promise.resolve(opened === STREAMS));
    // Fifty open streams hold a bounded batch each, not a copy of the world (a generous ceiling; a leak grows past it).
    expect(liveHeapBytes() - heapBefore).toBeLessThan(32 * 1024 * 1024);
    // Every slot is taken: one more is refused before it starts.
    const refused = await stream(runId);
    expect(refused.status).toBe(429);
    expect(refused.headers['x-error-code']).toBe('too_many_streams');
    expect(JSON.parse(refused.body)).toEqual({ data: null, error: expect.stringContaining('event streams open') });
    await approve(runId);
    const results = await Promise.all(readers);
    const expected = summary(results[0]!.events);
    expect(expected.at(-1)).toContain('run.ended');
    for (const r of results) expect(summary(r.events)).toEqual(expected);
    // Nothing of them stays behind once they have ended.
    expect(liveHeapBytes() - heapBefore).toBeLessThan(16 * 1024 * 1024);
    // Their slots are free again.
    await waitFor(async () => (await stream(runId)).status === 200);
  }, 90_000);

  it('refuses before any stream starts: no key 401, another user’s run 404, a bad Last-Event-ID 400', async () => {
    const runId = await gatedRun();
    const noKey = await readSse(eventsUrl(runId));
    expect(noKey.status).toBe(401);
    expect(JSON.parse(noKey.body)).toEqual({ data: null, error: expect.stringContaining('API key') });
    const other = await createTestUser(g.api.database.db);
    const foreign = await readSse(eventsUrl(runId), { headers: { Authorization: other.auth.Authorization } });
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.body)).toEqual({ data: null, error: `run ${runId} not found` });
    const unknown = await stream('run_doesnotexist123');
    expect(unknown.status).toBe(404);
    const bad = await stream(runId, { 'Last-Event-ID': 'yesterday' });
    expect(bad.status).toBe(400);
    const badQuery = await readSse(eventsUrl(runId, '?after=-1'), { headers: auth() });
    expect(badQuery.status).toBe(400);
    const unknownParam = await readSse(eventsUrl(runId, '?since=1'), { headers: auth() });
    expect(unknownParam.status).toBe(400);
    await waitForStatus(g.api, g.user, runId, (s) => s.status === 'waiting');
    await approve(runId);
    await waitForStatus(g.api, g.user, runId, isTerminal);
  }, 60_000);
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition not met');
}
