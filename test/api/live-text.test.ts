/**
 * Live tokens over the run event stream, against the real stack (Temporal, the database, a worker, the scripted model
 * streaming server-sent chunks): text arrives while the model is still generating, a reconnect with Last-Event-ID
 * gets every delta once, a call broken mid-stream and retried voids its partial text, nothing of it reaches
 * Temporal's history, a 100 000-character answer streams whole, and another user's stream is refused.
 */
import { startGraphStack, type GraphStack } from '../helpers/graph-stack';
import { liveHeapBytes } from '../helpers/heap';
import { historyText } from '../helpers/history-text';
import type { StreamPlan } from '../helpers/llm-server';
import { readSse, type SseEvent } from '../helpers/sse';
import { testCodec, uniqueId } from '../helpers/stack';
import { createTestUser } from '../helpers/users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import { getTranscript } from '../helpers/agent-runs';
import { LIVE_TEXT_BATCH_CHARS } from '../../temporal/activities/agent/live-text';

type Reply = Parameters<GraphStack['llm']['script']>[1];

describe('live text on the run event stream', () => {
  let g: GraphStack;
  let base: string;

  beforeAll(async () => {
    g = await startGraphStack({ EVENTS_POLL_MS: '50' });
    base = await g.api.listen();
  }, 60_000);
  afterAll(() => g?.stop());

  const eventsUrl = (runId: string) => `${base}/api/v1/workflows/runs/${runId}/events`;
  const stream = (runId: string, extra: Record<string, string> = {}, opts: Parameters<typeof readSse>[1] = {}) =>
    readSse(eventsUrl(runId), { timeoutMs: 60_000, ...opts, headers: { ...g.user.auth, ...extra } });
  const deltas = (events: SseEvent[]) => events.filter((e) => e.event === 'agent.text.delta');
  const joined = (events: SseEvent[]) =>
    deltas(events)
      .map((e) => String(e.data.text))
      .join('');
  /**
   * The text as a client keeps it (docs/runs.md, "Client rule"): a void, or a delta of a later attempt, starts it
   * over. A suite busy enough to make Temporal retry the call (its heartbeat late) streams the answer twice.
   */
  const kept = (events: SseEvent[]) => {
    let attempt = 0;
    let text = '';
    for (const e of events) {
      const at = Number(e.data.attempt);
      if (e.event === 'agent.text.void' || (e.event === 'agent.text.delta' && at > attempt)) {
        attempt = at;
        text = '';
      }
      if (e.event === 'agent.text.delta' && at === attempt) text += String(e.data.text);
    }
    return text;
  };

  /** A one-step agent workflow (`ask`) on a fresh scripted model; the run started. */
  const agentRun = async (script: Reply, retry?: number) => {
    const model = g.llm.script(uniqueId('live-'), script);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('agent'),
      default_prompt: 'Answer.',
      default_tools: ['calculator'],
      model: `openai:${model.model}`,
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('live'),
      steps: [
        { id: 'ask', template_id: agent._id, input: 'Tell me.', ...(retry ? { retry: { max_attempts: retry } } : {}) },
      ],
    });
    return startRun(g.api, g.user, wf);
  };

  /** A promise the test settles, to end a hold of the model server. */
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };

  it('shows text while the model is still generating; a reconnect with Last-Event-ID gets every delta once', async () => {
    const answer = Array.from({ length: 30 }, (_, i) => `word${i} `).join('') + 'done.';
    const hold = gate();
    const plan: StreamPlan = { chunkChars: 5, holdAfter: { chars: 40, until: hold.opened } };
    const runId = await agentRun([{ text: answer, stream: plan }]);

    // Another user is refused before any stream starts.
    const other = await createTestUser(g.api.database.db);
    const foreign = await readSse(eventsUrl(runId), { headers: other.auth });
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.body)).toEqual({ data: null, error: `run ${runId} not found` });

    // The model sends 40 characters and holds the rest: a reader sees them before the call can have ended.
    let seenWhileHeld = '';
    const live = stream(
      runId,
      {},
      {
        // A deadline for a hang, not a speed bound: a suite busy with other stacks has taken over a minute here.
        timeoutMs: 110_000,
        onEvent: (e) => {
          if (e.event !== 'agent.text.delta' || seenWhileHeld.length >= 40) return;
          seenWhileHeld += String(e.data.text);
          if (seenWhileHeld.length >= 40) hold.open();
        },
      },
    );
    // A second reader leaves after the first delta, while the model still holds the rest, and comes back.
    const first = await stream(runId, {}, { stopWhen: (e) => e.event === 'agent.text.delta' });
    expect(first.endedByServer).toBe(false);
    const whole = await live;
    expect(seenWhileHeld).toBe(answer.slice(0, seenWhileHeld.length));
    const resumed = await stream(runId, { 'Last-Event-ID': first.events.at(-1)!.id! });

    expect(joined(whole.events)).toBe(answer);
    const again = [...first.events, ...resumed.events];
    expect(again.map((e) => e.id)).toEqual(whole.events.map((e) => e.id));
    expect(joined(again)).toBe(answer);

    // The format clients build on; the turn's agent.model_call comes after its text.
    expect(deltas(whole.events)[0]!.data).toEqual({
      seq: Number(deltas(whole.events)[0]!.id),
      run_id: runId,
      at: expect.any(String),
      type: 'agent.text.delta',
      exec_id: 'ask',
      step_id: 'ask',
      turn: 1,
      attempt: 1,
      text: expect.any(String),
    });
    const kinds = whole.events.map((e) => e.event).filter((k, i, all) => k !== all[i - 1]);
    expect(kinds).toEqual(['step.started', 'agent.text.delta', 'agent.model_call', 'step.completed', 'run.ended']);
    const transcript = await getTranscript(g.api, g.user, runId);
    expect(transcript.final_answer).toBe(answer);
  }, 90_000);

  it('a call broken mid-stream and retried: the void event, then the new text; the transcript has the final text', async () => {
    const partial = 'A first draft that will never be finished';
    const final = 'The final answer, from the second attempt.';
    const broken = gate();
    const runId = await agentRun(
      [
        { text: partial, stream: { chunkChars: 4, holdAfter: { chars: 20, until: broken.opened }, breakAfter: 20 } },
        { text: final, stream: { chunkChars: 6 } },
      ],
      3,
    );
    // The model breaks the first attempt's stream once a reader has its partial text.
    const events = (
      await stream(runId, {}, { onEvent: (e) => (e.event === 'agent.text.delta' ? broken.open() : undefined) })
    ).events;
    const text = events.filter((e) => e.event.startsWith('agent.text.'));
    const voided = text.findIndex((e) => e.event === 'agent.text.void');
    expect(voided).toBeGreaterThan(0);
    expect(text[voided]!.data).toMatchObject({ exec_id: 'ask', step_id: 'ask', turn: 1, attempt: 2 });
    expect(text.slice(0, voided).every((e) => e.data.attempt === 1)).toBe(true);
    expect(partial.startsWith(joined(text.slice(0, voided)))).toBe(true);
    expect(text.slice(voided + 1).every((e) => e.event === 'agent.text.delta' && e.data.attempt === 2)).toBe(true);
    expect(joined(text.slice(voided + 1))).toBe(final);
    // What a client holds after applying the events in order: the final text only.
    let shown = '';
    for (const e of text) shown = e.event === 'agent.text.void' ? '' : shown + String(e.data.text);
    expect(shown).toBe(final);

    const transcript = await getTranscript(g.api, g.user, runId);
    expect(transcript.final_answer).toBe(final);
    const assistant = transcript.entries.filter((e) => e.role === 'assistant');
    expect(assistant).toHaveLength(1);
    expect(JSON.stringify(transcript)).not.toContain(partial.slice(0, 20));
    expect(events.map((e) => e.event)).toContain('step.retrying');
  }, 90_000);

  it('keeps the live text out of Temporal’s history', async () => {
    const mark = uniqueId('mark-');
    const thinking = `Let me work this out first ${mark} with the calculator.`;
    const runId = await agentRun([
      { text: thinking, toolCalls: [{ name: 'calculator', args: { expression: '6 * 7' } }] },
      { text: '42' },
    ]);
    const events = (await stream(runId)).events;
    const turns = deltas(events).map((e) => e.data.turn);
    expect(joined(events.filter((e) => e.data.turn === 1))).toBe(thinking);
    expect(joined(events.filter((e) => e.data.turn === 2))).toBe('42');
    expect(turns).toEqual([...turns].sort());
    const history = await g.api.temporal.workflow.getHandle(runId).fetchHistory();
    const text = await historyText(history, testCodec());
    expect(text).toContain('calculator'); // the decoded history is readable: the check below can see text
    expect(text).not.toContain(mark);
  }, 90_000);

  it('streams a 100 000-character answer whole, in bounded batches, with bounded memory', async () => {
    const answer = Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join('');
    const halfway = gate();
    const plan: StreamPlan = { chunkChars: 16, holdAfter: { chars: 50_000, until: halfway.opened } };
    const heapBefore = liveHeapBytes();
    const runId = await agentRun([{ text: answer, stream: plan }]);
    let heapMidway = 0;
    let received = 0;
    const whole = await stream(
      runId,
      {},
      {
        // A deadline for a hang, not a speed bound: a suite busy with other stacks has taken over a minute here.
        timeoutMs: 110_000,
        onEvent: (e) => {
          if (e.event !== 'agent.text.delta' || received >= 50_000) return;
          received += String(e.data.text).length;
          if (received >= 50_000) {
            heapMidway = liveHeapBytes();
            halfway.open();
          }
        },
      },
    );
    // Compared by length and equality: a failure message with the 100 000 characters twice would bury the rest.
    const same = (text: string) => ({ length: text.length, equal: text === answer });
    expect(same(kept(whole.events))).toEqual({ length: answer.length, equal: true });
    const sizes = deltas(whole.events).map((e) => String(e.data.text).length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(LIVE_TEXT_BATCH_CHARS);
    expect(sizes.length).toBeGreaterThanOrEqual(Math.ceil(answer.length / LIVE_TEXT_BATCH_CHARS));
    // API, worker and client share this process: a generous ceiling that a copy per event or per poll would pass.
    expect(heapMidway - heapBefore).toBeLessThan(32 * 1024 * 1024);
    const status = await waitForStatus(g.api, g.user, runId, isTerminal);
    // When not completed, the message shows the run's and the step's error.
    expect({ status: status.status, error: status.error, step: status.steps[0]?.error ?? null }).toEqual({
      status: 'completed',
      error: null,
      step: null,
    });
    expect(same(String((await getTranscript(g.api, g.user, runId)).final_answer))).toEqual(same(answer));
  }, 150_000);
});
