/**
 * Thread compaction on the real stack (decision 0601): once a thread's turns outgrow the template's `context_tokens`,
 * the turn's compaction call (the scripted model answers it with a recognisable summary) writes a `summary` message;
 * the next model requests carry the summary and not the summarised turns; the raw messages all stay; the call counts
 * in the turn's and the thread's usage and in the owner's day. A summary is written once per turn (a retry finds it).
 */
import { putSummary, threadMessagesCollection, type ThreadMessageDoc } from '../../db/thread-messages';
import { runsCollection } from '../../db/runs';
import { threadsCollection } from '../../db/threads';
import { usageCallsCollection } from '../../db/usage';
import { COMPACTION_SYSTEM } from '../../temporal/activities/agent/compact-thread';
import { readThreadWindow } from '../../temporal/activities/agent/thread-context';
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import type { RecordedRequest } from '../helpers/llm-server';
import { uniqueId } from '../helpers/stack';

type Body = Record<string, unknown>;
type Msg = { role: string; content: unknown };

const systemOf = (req: RecordedRequest) => {
  const m = (req.body.messages as Msg[]).find((x) => x.role === 'system');
  return typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '');
};
const isCompaction = (req: RecordedRequest) => systemOf(req) === COMPACTION_SYSTEM;
const turnTexts = (req: RecordedRequest) =>
  (req.body.messages as Msg[])
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => `${m.role}:${(typeof m.content === 'string' ? m.content : JSON.stringify(m.content)).slice(0, 8)}`);

describe('thread compaction', () => {
  let g: GraphStack;

  beforeAll(async () => {
    g = await startGraphStack({ EVENTS_POLL_MS: '50' });
  }, 60_000);
  afterAll(() => g?.stop());

  it('summarises the turns that no longer fit; later turns get the summary, the raw messages stay', async () => {
    let summaries = 0;
    let replies = 0;
    const model = g.llm.script(uniqueId('compact-'), (req) =>
      isCompaction(req)
        ? { text: `SUMMARY#${++summaries}`, usage: { input: 50, output: 7 } }
        : { text: `reply ${++replies}`, usage: { input: 10, output: 2 } },
    );
    const tpl = await g.api.http
      .post('/api/v1/agents')
      .set(g.user.auth)
      .send({
        name: uniqueId('compacting '),
        default_prompt: 'Answer.',
        model: `openai:${model.model}`,
        context_tokens: 256,
      });
    expect(tpl.status).toBe(201);
    const created = await g.api.http.post('/api/v1/threads').set(g.user.auth).send({ template: tpl.body.data.id });
    const id = created.body.data.id as string;
    // About 100 tokens a message: two earlier turns fit the window, three do not.
    const runIds: string[] = [];
    for (const n of [1, 2, 3, 4, 5, 6]) {
      const res = await g.api.http
        .post(`/api/v1/threads/${id}/messages?wait=30`)
        .set(g.user.auth)
        .send({ text: `m${n} ` + 'x'.repeat(400) });
      expect(res.status).toBe(200);
      expect(res.body.data.status).toBe('completed');
      runIds.push(res.body.data.run_id as string);
    }

    // Turn 4 compacted turns 1–2 (turn 3 fits half the window); turn 6 folded that summary and turns 3–4 in.
    const compactions = model.requests.filter(isCompaction);
    expect(compactions).toHaveLength(2);
    const firstPrompt = turnTexts(compactions[0]!).join('|');
    expect(JSON.stringify(compactions[0]!.body.messages)).toContain('m1 xxx');
    expect(JSON.stringify(compactions[0]!.body.messages)).toContain('m2 xxx');
    expect(JSON.stringify(compactions[0]!.body.messages)).not.toContain('m3 xxx');
    expect(firstPrompt).toMatch(/^user:/);
    expect(JSON.stringify(compactions[1]!.body.messages)).toContain('SUMMARY#1');
    expect(JSON.stringify(compactions[1]!.body.messages)).toContain('m4 xxx');

    // Turn 4's answer: the summary after the system prompt, then turn 3 and the new message — not turns 1 and 2.
    const chats = model.requests.filter((r) => !isCompaction(r));
    expect(chats).toHaveLength(6);
    expect(systemOf(chats[3]!)).toContain('SUMMARY#1');
    expect(systemOf(chats[3]!)).toContain('turns 1–2');
    expect(turnTexts(chats[3]!)).toEqual(['user:m3 xxxxx', 'assistant:reply 3', 'user:m4 xxxxx']);
    expect(systemOf(chats[4]!)).toContain('SUMMARY#1');
    expect(turnTexts(chats[4]!)).toEqual([
      'user:m3 xxxxx',
      'assistant:reply 3',
      'user:m4 xxxxx',
      'assistant:reply 4',
      'user:m5 xxxxx',
    ]);
    expect(systemOf(chats[5]!)).toContain('SUMMARY#2');
    expect(systemOf(chats[5]!)).not.toContain('SUMMARY#1');
    expect(turnTexts(chats[5]!)).toEqual(['user:m5 xxxxx', 'assistant:reply 5', 'user:m6 xxxxx']);

    // Every raw message is still listed, the summaries in between (pos 1 of the turn that wrote them).
    const list = await g.api.http.get(`/api/v1/threads/${id}/messages?limit=200`).set(g.user.auth);
    const conv = list.body.data as Body[];
    expect(conv.map((m) => `${m.id as string} ${m.role as string}`)).toEqual([
      'm1.0 user',
      'm1.2 assistant',
      'm2.0 user',
      'm2.2 assistant',
      'm3.0 user',
      'm3.2 assistant',
      'm4.0 user',
      'm4.1 summary',
      'm4.2 assistant',
      'm5.0 user',
      'm5.2 assistant',
      'm6.0 user',
      'm6.1 summary',
      'm6.2 assistant',
    ]);
    const s1 = conv.find((m) => m.id === 'm4.1')!;
    expect(s1).toMatchObject({
      role: 'summary',
      text: 'SUMMARY#1',
      summary: { from_turn: 1, to_turn: 2, usage: { input_tokens: 50, output_tokens: 7 } },
    });
    expect((s1.summary as Body).request).toMatchObject({ system: COMPACTION_SYSTEM });
    expect(conv.find((m) => m.id === 'm6.1')).toMatchObject({ summary: { from_turn: 1, to_turn: 4 } });

    // The compaction counted: in its turn's usage, the thread's, and the owner's day (keyed by the turn's run).
    expect(conv.find((m) => m.id === 'm4.0')).toMatchObject({
      usage: { llm_calls: 2, input_tokens: 60, output_tokens: 9 },
    });
    const thread = (await g.api.http.get(`/api/v1/threads/${id}`).set(g.user.auth)).body.data as Body;
    expect(thread).toMatchObject({ message_count: 14, usage: { llm_calls: 8, input_tokens: 160, output_tokens: 26 } });
    const call = await usageCallsCollection(g.api.database.db).findOne({
      _id: `${g.user.id}:${runIds[3]}:chat:summary`,
    });
    expect((call?.input_tokens ?? 0) + (call?.output_tokens ?? 0)).toBe(57);

    // Where the next turns' context reads start: after the latest summary's turns, carried by each turn's snapshot.
    const db = g.api.database.db;
    expect((await threadsCollection(db).findOne({ _id: id }))?.summarized_to).toBe(4);
    const threadOf = async (runId: string) => {
      const step = (await runsCollection(db).findOne({ _id: runId }))?.snapshot.steps[0];
      return step?.kind === 'agent' ? step.thread : undefined;
    };
    expect(await threadOf(runIds[3]!)).toEqual({ id, turn: 4, context_tokens: 256 });
    expect(await threadOf(runIds[5]!)).toEqual({ id, turn: 6, context_tokens: 256, after_turn: 2 });
    // The read from there holds the turns after the summary (and the summary), not the thread's whole length.
    const ref = { id, turn: 7, context_tokens: 256 };
    const turnsRead = async (after_turn?: number) =>
      (await readThreadWindow(db, { ...ref, ...(after_turn ? { after_turn } : {}) })).docs.map((d) => d._id.slice(-13));
    expect(await turnsRead(4)).toEqual([
      '000006:000002',
      '000006:000001',
      '000006:000000',
      '000005:000002',
      '000005:000000',
    ]);
    expect(await turnsRead()).toHaveLength(14);

    // A fork starts its reads after the latest summary it copied, not the source's.
    const forkAt = async (at: string) => {
      const res = await g.api.http.post(`/api/v1/threads/${id}/fork`).set(g.user.auth).send({ at });
      expect(res.status).toBe(201);
      return (await threadsCollection(db).findOne({ _id: res.body.data.id as string }))?.summarized_to;
    };
    expect(await forkAt('m5.2')).toBe(2);
    expect(await forkAt('m3.2')).toBe(0);
  }, 120_000);

  it('writes one summary per turn: a repeated write keeps the first', async () => {
    const db = g.api.database.db;
    const threadId = uniqueId('thr_');
    const doc = (text: string): ThreadMessageDoc => ({
      _id: `${threadId}:000000003:000001`,
      thread_id: threadId,
      owner_id: g.user.id,
      turn: 3,
      pos: 1,
      role: 'summary',
      text,
      summary: {
        from_turn: 1,
        to_turn: 2,
        model: 'openai:x',
        usage: { input_tokens: 1, output_tokens: 1 },
        request: { system: 's', prompt: 'p' },
      },
      created_at: new Date(),
    });
    expect((await putSummary(db, doc('first'))).text).toBe('first');
    expect((await putSummary(db, doc('second'))).text).toBe('first');
    expect(await threadMessagesCollection(db).countDocuments({ thread_id: threadId })).toBe(1);
  });
});
