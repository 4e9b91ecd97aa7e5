/**
 * The history bound of threads (docs/threads.md, decision 0600), shared by the regular suite (60 turns) and the chaos
 * run (500 turns, test/reliability/thread-history.chaos.ts): one thread, each turn a ~10 KB user message answered
 * with ~10 KB, and every turn's Temporal history — each turn is a run of its own — stays under 1 MB and does not grow
 * with the turn number, because the conversation lives in MongoDB and the workflow input carries only ids.
 */
import { startGraphStack, type GraphStack } from './graph-stack';
import { uniqueId } from './stack';
import { insertTemplate } from './workflows';

const KB10 = 10 * 1024;
const MB = 1024 * 1024;

export function threadHistoryCase(turns: number): void {
  describe(`a thread of ${turns} turns of 10 KB messages`, () => {
    let g: GraphStack;

    beforeAll(async () => {
      // A turn is a run start: at 500 turns the default run-start quota (60 a minute) would refuse most of them.
      g = await startGraphStack({ RATE_LIMIT_RUNS_PER_MINUTE: '100000', RATE_LIMIT_PER_MINUTE: '100000' });
    }, 60_000);
    afterAll(() => g?.stop());

    it(
      'keeps every turn’s Temporal history under 1 MB, flat in the turn number',
      async () => {
        const model = g.llm.script(uniqueId('hist-'), (_req, i) => ({ text: `reply ${i + 1} ` + 'r'.repeat(KB10) }));
        const tpl = await insertTemplate(g.api.database.db, g.user.id, {
          step_type: 'agent',
          name: uniqueId('history agent '),
          default_prompt: 'Answer briefly.',
          default_tools: [],
          default_tasks: [],
          model: `openai:${model.model}`,
        });
        const created = await g.api.http.post('/api/v1/threads').set(g.user.auth).send({ template: tpl._id });
        const id = created.body.data.id as string;
        const bytes: number[] = [];
        let after: string | undefined;
        for (let turn = 1; turn <= turns; turn++) {
          const text = `message ${turn} ` + 'u'.repeat(KB10);
          const res = await g.api.http
            .post(`/api/v1/threads/${id}/messages?wait=60`)
            .set(g.user.auth)
            .send({ text, ...(after ? { after } : {}) });
          if (res.status !== 200) throw new Error(`turn ${turn}: ${res.status} ${JSON.stringify(res.body)}`);
          after = res.body.data.reply.id as string;
          // The turn's end is written just before its workflow closes: its whole history once it has.
          const handle = g.api.temporal.workflow.getHandle(res.body.data.run_id as string);
          await handle.result();
          const history = await handle.fetchHistory();
          bytes.push(Buffer.byteLength(JSON.stringify(history)));
        }
        expect(Math.max(...bytes)).toBeLessThan(MB);
        // Flat: the last turns' histories are no larger than the first turns' (a turn number has a few more digits).
        const first = Math.max(...bytes.slice(0, 5));
        const last = Math.max(...bytes.slice(-5));
        expect(last).toBeLessThanOrEqual(first * 1.02);
        // The model still answers from a window of the conversation, not all of it.
        const lastCall = model.requests[model.requests.length - 1]!;
        const sent = Buffer.byteLength(JSON.stringify(lastCall.body.messages));
        expect(sent).toBeLessThan(16_000 * 4 + 3 * KB10);
        const thread = await g.api.http.get(`/api/v1/threads/${id}`).set(g.user.auth);
        // Each compaction's summary (decision 0601) is a message of the thread too.
        const summaries = await g.api.database.db
          .collection('thread_messages')
          .countDocuments({ thread_id: id, role: 'summary' });
        expect(summaries).toBeGreaterThan(0);
        expect(thread.body.data).toMatchObject({ turns, message_count: 2 * turns + summaries, running_turn: null });
      },
      60_000 + turns * 5_000,
    );
  });
}
