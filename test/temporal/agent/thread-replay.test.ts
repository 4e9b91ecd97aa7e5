/**
 * Replay of a committed thread-turn history against the current workflow bundle: a thread's agent step schedules what
 * no other step does — the compaction activity before its first model call (decision 0601) and the `update_memory`
 * tool as its own activity — so a change to those commands fails here instead of breaking turns in flight
 * (docs/decisions/0430-shipping-workflow-changes.md).
 *
 * Recorded from a real thread: `STEPWISE_RECORD_HISTORIES=thread npx jest test/temporal/agent/thread-replay` writes
 * test/temporal/histories/thread-turn-compacted.json — turn 4 of a thread whose window holds two earlier turns, so it
 * compacts turns 1–2 first, then the model updates the memory and answers.
 *
 * And a workflow's agent step in a thread (decision 0603): `STEPWISE_RECORD_HISTORIES=thread-step npx jest
 * test/temporal/agent/thread-replay` writes test/temporal/histories/thread-step-waited.json — the step finds the
 * thread busy (an API turn runs), waits on a timer, takes the next turn, answers and ends the turn.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Runtime, Worker } from '@temporalio/worker';
import { COMPACTION_SYSTEM } from '../../../temporal/activities/agent/compact-thread';
import { startGraphStack } from '../../helpers/graph-stack';
import type { RecordedRequest, ScriptedReply } from '../../helpers/llm-server';
import { testDataConverter, uniqueId } from '../../helpers/stack';
import { testTemporalLogger } from '../../helpers/test-logging';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../../helpers/workflows';

const FILE = path.resolve(__dirname, '..', 'histories', 'thread-turn-compacted.json');
const RECORD = process.env.STEPWISE_RECORD_HISTORIES === 'thread';
const STEP_FILE = path.resolve(__dirname, '..', 'histories', 'thread-step-waited.json');
const RECORD_STEP = process.env.STEPWISE_RECORD_HISTORIES === 'thread-step';
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

async function recordStep(): Promise<void> {
  const g = await startGraphStack({ PAYLOAD_CODEC_KEYS: '' });
  try {
    let release!: (r: ScriptedReply) => void;
    const held = new Promise<ScriptedReply>((resolve) => (release = resolve));
    const model = g.llm.script(uniqueId('thread-step-replay-'), (req) =>
      JSON.stringify(req.body.messages).includes('from the workflow')
        ? { text: 'answered in the thread' }
        : { hold: held },
    );
    const tpl = await g.api.http
      .post('/api/v1/agents')
      .set(g.user.auth)
      .send({ name: uniqueId('replayed step '), default_prompt: 'Answer.', model: `openai:${model.model}` });
    const thread = await g.api.http.post('/api/v1/threads').set(g.user.auth).send({ template: tpl.body.data.id });
    const threadId = thread.body.data.id as string;
    await g.api.http.post(`/api/v1/threads/${threadId}/messages`).set(g.user.auth).send({ text: 'first' });
    await model.waitForRequests(1);
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('replayed thread step '),
      steps: [{ id: 'ask', template_id: tpl.body.data.id, thread: '{{input.thread_id}}', input: 'from the workflow' }],
    });
    const runId = await startRun(g.api, g.user, wf, { thread_id: threadId });
    await waitForStatus(g.api, g.user, runId, (s) => s.steps[0]?.status === 'running');
    release({ text: 'first answer' });
    const status = await waitForStatus(g.api, g.user, runId, isTerminal, 60_000);
    if (status.status !== 'completed') throw new Error(`the run ended ${JSON.stringify(status)}`);
    const handle = g.api.temporal.workflow.getHandle(runId);
    await handle.result();
    fs.writeFileSync(STEP_FILE, toJson(await handle.fetchHistory()));
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
    if (RECORD_STEP) await recordStep();
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

  it("holds a workflow's agent step that waited for the thread, took a turn and ended it; replays", async () => {
    const bundle = process.env.STEPWISE_TEST_BUNDLE;
    if (!bundle) throw new Error('STEPWISE_TEST_BUNDLE is not set: run the suite with "npm test"');
    const text = fs.readFileSync(STEP_FILE, 'utf8');
    // What makes this history worth keeping: the step asked twice (busy, then joined) with a timer between.
    expect(text.split('"joinThread"').length - 1).toBeGreaterThanOrEqual(2);
    expect(text).toContain('"EVENT_TYPE_TIMER_STARTED"');
    expect(text).toContain('"leaveThread"');
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: bundle }, dataConverter: testDataConverter() },
      fromJson(text),
      'thread-step-waited',
    );
  });
});
