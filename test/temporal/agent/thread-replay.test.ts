/**
 * Replay of a committed thread-turn history against the current workflow bundle: a thread's agent step schedules what
 * no other step does — the compaction activity before its first model call (decision 0601) and the `update_memory`
 * tool as its own activity — so a change to those commands fails here instead of breaking turns in flight
 * (docs/decisions/0430-shipping-workflow-changes.md).
 *
 * Recorded from a real thread: `STEPWISE_RECORD_HISTORIES=thread npx jest test/temporal/agent/thread-replay` writes
 * test/temporal/histories/thread-turn-compacted.json — turn 4 of a thread whose window holds two earlier turns, so it
 * compacts turns 1–2 first, then the model updates the memory and answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Runtime, Worker } from '@temporalio/worker';
import { COMPACTION_SYSTEM } from '../../../temporal/activities/agent/compact-thread';
import { startGraphStack } from '../../helpers/graph-stack';
import type { RecordedRequest } from '../../helpers/llm-server';
import { testDataConverter, uniqueId } from '../../helpers/stack';
import { testTemporalLogger } from '../../helpers/test-logging';

const FILE = path.resolve(__dirname, '..', 'histories', 'thread-turn-compacted.json');
const RECORD = process.env.STEPWISE_RECORD_HISTORIES === 'thread';
const { History } = temporal.api.history.v1;

const toJson = (history: temporal.api.history.v1.IHistory) =>
  JSON.stringify(
    History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String }),
    null,
    1,
  );
const fromJson = (text: string) => History.fromObject(JSON.parse(text) as Record<string, unknown>);

const isCompaction = (req: RecordedRequest) =>
  (req.body.messages as { role: string; content: unknown }[]).some(
    (m) => m.role === 'system' && m.content === COMPACTION_SYSTEM,
  );

async function record(): Promise<void> {
  // Without payload encryption, so the committed history reads as plain JSON.
  const g = await startGraphStack({ PAYLOAD_CODEC_KEYS: '' });
  try {
    let fourth = 0;
    const model = g.llm.script(uniqueId('thread-replay-'), (req) => {
      if (isCompaction(req)) return { text: 'SUMMARY of turns 1-2' };
      const last = JSON.stringify((req.body.messages as unknown[]).at(-1));
      if (last.includes('m4 ') && fourth++ === 0) {
        return { toolCalls: [{ name: 'update_memory', args: { patch: { name: 'Ada' } } }] };
      }
      return { text: 'ok' };
    });
    const tpl = await g.api.http
      .post('/api/v1/agents')
      .set(g.user.auth)
      .send({
        name: uniqueId('replayed thread '),
        default_prompt: 'Answer.',
        model: `openai:${model.model}`,
        context_tokens: 256,
        memory_schema: { type: 'object', properties: { name: { type: 'string' } } },
      });
    const created = await g.api.http.post('/api/v1/threads').set(g.user.auth).send({ template: tpl.body.data.id });
    let runId = '';
    for (const n of [1, 2, 3, 4]) {
      const res = await g.api.http
        .post(`/api/v1/threads/${created.body.data.id as string}/messages?wait=30`)
        .set(g.user.auth)
        .send({ text: `m${n} ` + 'x'.repeat(400) });
      if (res.body.data?.status !== 'completed') throw new Error(`turn ${n}: ${JSON.stringify(res.body)}`);
      runId = res.body.data.run_id as string;
    }
    if (model.requests.filter(isCompaction).length !== 1) throw new Error('turn 4 did not compact');
    const handle = g.api.temporal.workflow.getHandle(runId);
    await handle.result();
    fs.writeFileSync(FILE, toJson(await handle.fetchHistory()));
  } finally {
    await g.stop();
  }
}

describe('replay of a committed thread-turn history', () => {
  beforeAll(async () => {
    try {
      Runtime.install({ logger: testTemporalLogger() });
    } catch {
      // already installed in this process
    }
    if (RECORD) await record();
  }, 120_000);

  it('holds the compaction and the memory update, and replays with the current workflow code', async () => {
    const bundle = process.env.STEPWISE_TEST_BUNDLE;
    if (!bundle) throw new Error('STEPWISE_TEST_BUNDLE is not set: run the suite with "npm test"');
    const text = fs.readFileSync(FILE, 'utf8');
    // What makes this history worth keeping: both thread-only activities are in it.
    expect(text).toContain('"compactThread"');
    expect(text).toContain('"updateMemory"');
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: bundle }, dataConverter: testDataConverter() },
      fromJson(text),
      'thread-turn-compacted',
    );
  });
});
