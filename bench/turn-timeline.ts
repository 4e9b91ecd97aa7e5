/**
 * `npx tsx bench/timeline.ts T1 [samples]`: where T1's time to the first live token goes. Each sample is T1's thread
 * arm (a new thread, its event stream open, then `POST …/messages` timed to the first `agent.text.delta` on the
 * stream), and the turn is then read back: the run record, the turn run's Temporal history, the mock model's arrival
 * time and the first delta's write time in the run's event log. Every mark is in ms from the POST being sent, all
 * clocks this machine's; the medians over the samples (the first two left out) are printed mark by mark.
 */
import type { LlmServer } from '../test/helpers/llm-server';
import { temporal as proto } from '@temporalio/proto';
import { runEventsCollection } from '../db/run-events';
import { runsCollection } from '../db/runs';
import { MOCK_LLM_LATENCY_MS } from './agent-overhead';
import type { BenchContext } from './arms';
import { agentTemplate, firstEvent, newThread, waitForIdle } from './threads';

const EventType = proto.api.enums.v1.EventType;
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

/** A model like the bench's 300 ms one that notes when each request arrived. */
const TIMELINE_MODEL = 'bench-300ms-timeline';

type Marks = Record<string, number>;

export async function t1Timeline(ctx: BenchContext, llm: LlmServer, samples: number): Promise<void> {
  const arrivals: number[] = [];
  llm.script(TIMELINE_MODEL, () => {
    arrivals.push(Date.now());
    return { hold: new Promise((r) => setTimeout(r, MOCK_LLM_LATENCY_MS)).then(() => ({ text: 'done' })) };
  });
  const template = await agentTemplate(ctx, TIMELINE_MODEL, 'T1 timeline');
  const all: Marks[] = [];
  for (let i = 0; i < samples; i++) {
    const threadId = await newThread(ctx, template, 'T1 timeline');
    const stream = firstEvent(
      `${ctx.stack.apiUrl}/api/v1/threads/${threadId}/events`,
      ctx.stack.apiKey,
      'agent.text.delta',
    );
    await stream.opened;
    const t0 = Date.now();
    const marks: Marks = {};
    const posted = await ctx.api.call<{ run_id: string }>('POST', `/api/v1/threads/${threadId}/messages`, {
      text: 'go',
    });
    marks['POST answered'] = Date.now() - t0;
    await stream.seen;
    marks['first delta on the SSE stream'] = Date.now() - t0;
    stream.close();
    await waitForIdle(ctx, threadId);
    const runId = posted.data.run_id;
    const db = ctx.stack.database.db;
    const run = await runsCollection(db).findOne({ _id: runId });
    if (run) marks['run record created'] = run.created_at.getTime() - t0;
    const events = (await ctx.stepwiseTemporal.workflow.getHandle(runId).fetchHistory()).events ?? [];
    marks['workflow started'] = ms(events[0]?.eventTime) - t0;
    let tasks = 0;
    const activity = new Map<number, string>();
    for (const e of events) {
      const at = ms(e.eventTime) - t0;
      const type = e.eventType;
      if (type === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) {
        tasks += 1;
        if (tasks <= 3) marks[`workflow task ${tasks} started`] = at;
      } else if (type === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
        if (tasks <= 3) marks[`workflow task ${tasks} completed`] = at;
      } else if (type === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        const name = e.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
        activity.set(Number(e.eventId), name);
        marks[`${name} scheduled`] ??= at;
      } else if (type === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
        const name = activity.get(Number(e.activityTaskStartedEventAttributes?.scheduledEventId)) ?? '?';
        marks[`${name} started`] ??= at;
      } else if (type === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
        const name = activity.get(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId)) ?? '?';
        marks[`${name} completed`] ??= at;
      }
    }
    const arrived = arrivals[i];
    if (arrived !== undefined) {
      marks['model request arrived'] = arrived - t0;
      marks['model answers'] = arrived + MOCK_LLM_LATENCY_MS - t0;
    }
    const delta = await runEventsCollection(db).findOne(
      { run_id: runId, type: 'agent.text.delta' },
      { sort: { seq: 1 } },
    );
    if (delta) marks['first delta written'] = delta.at.getTime() - t0;
    all.push(marks);
  }
  const kept = all.slice(2);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const names = [...new Set(kept.flatMap((m) => Object.keys(m)))];
  const rows = names
    .map((name) => ({ name, at: median(kept.flatMap((m) => (m[name] === undefined ? [] : [m[name]]))) }))
    .sort((a, b) => a.at - b.at);
  process.stdout.write(`T1 turn: medians of ${kept.length} samples, ms from the POST being sent\n`);
  let prev = 0;
  for (const r of rows) {
    process.stdout.write(`  +${String(r.at).padStart(5)} (${String(r.at - prev).padStart(4)})  ${r.name}\n`);
    prev = r.at;
  }
}
