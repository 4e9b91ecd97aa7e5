/**
 * `npx tsx bench/timeline.ts B2|B4|B6|T1 [runs]`: where a row's time goes, event by event. Starts the bench stack, runs the
 * row's Stepwise workflow and its bare arm a few times (the first ones warm up), and prints the last of each from
 * Temporal's history: every event at its offset from the start and the gap before it, the activity or marker named.
 * Workflow task gaps (scheduled → started → completed) are the worker's; activity gaps hold what the activity does.
 * Beside the ratios of `npm run bench`, this shows whether a difference is in the activities, the workflow tasks, or
 * around the execution (the API's start before, the status read after). Then the medians over the runs (the first two
 * of each arm left out, as warm-up) of the same phases, each arm's: one run is noise, the medians are the answer.
 */
import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { startHttpSink } from '../test/helpers/http-sink';
import { MOCK_LLM_MODEL, startMockLlm } from './agent-overhead';
import { createContext } from './arms';
import { startBenchStack } from './stack';
import { t1Timeline } from './turn-timeline';

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

async function printHistory(
  temporal: Client,
  workflowId: string,
  label: string,
  clientStart?: number,
  clientEnd?: number,
) {
  const events = (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const start = ms(events[0]?.eventTime);
  const around = clientStart === undefined ? '' : ` (began ${start - clientStart} ms after the client's start call)`;
  process.stdout.write(`${label}${around}\n`);
  let prev = start;
  for (const e of events) {
    const at = ms(e.eventTime);
    const name =
      e.activityTaskScheduledEventAttributes?.activityType?.name ?? e.markerRecordedEventAttributes?.markerName ?? '';
    const type = (proto.api.enums.v1.EventType[e.eventType ?? 0] ?? '').replace('EVENT_TYPE_', '');
    process.stdout.write(
      `  +${String(at - start).padStart(5)} ms (${String(at - prev).padStart(4)})  ${type} ${name}\n`,
    );
    prev = at;
  }
  if (clientEnd !== undefined) process.stdout.write(`  the client saw the end at +${clientEnd - start} ms\n`);
}

type History = proto.api.history.v1.IHistoryEvent[];
const EventType = proto.api.enums.v1.EventType;

/** A run's time by phase: before Temporal has it, workflow tasks, activities, the rest of the execution, after. */
interface Phases {
  before: number;
  tasks: number[];
  activities: number[];
  other: number;
  after: number;
  total: number;
}

function phasesOf(events: History, clientStart: number, clientEnd: number): Phases {
  const start = ms(events[0]?.eventTime);
  const end = ms(events.at(-1)?.eventTime);
  const tasks: number[] = [];
  const activities: number[] = [];
  let taskScheduled = start;
  let activityScheduled = start;
  for (const e of events) {
    const at = ms(e.eventTime);
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) taskScheduled = at;
    if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) tasks.push(at - taskScheduled);
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) activityScheduled = at;
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) activities.push(at - activityScheduled);
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    before: start - clientStart,
    tasks,
    activities,
    other: end - start - sum(tasks) - sum(activities),
    after: clientEnd - end,
    total: clientEnd - clientStart,
  };
}

function printMedians(label: string, runs: Phases[]): void {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const each = (pick: (p: Phases) => number[]) =>
    (pick(runs[0]!) ?? []).map((_, i) => median(runs.map((r) => pick(r)[i] ?? 0))).join(' + ');
  process.stdout.write(
    `${label.padEnd(9)} ${median(runs.map((r) => r.total))} ms: before ${median(runs.map((r) => r.before))}` +
      ` | workflow tasks ${each((r) => r.tasks)} | activities ${each((r) => r.activities) || '-'}` +
      ` | other ${median(runs.map((r) => r.other))} | after ${median(runs.map((r) => r.after))}\n`,
  );
}

async function main(): Promise<void> {
  const row = (process.argv[2] ?? 'B4').toUpperCase();
  const runs = Math.max(3, Number(process.argv[3] ?? 12));
  const llm = await startMockLlm();
  const sink = await startHttpSink();
  const stack = await startBenchStack({ extraEnv: { ...llm.env, HTTP_ALLOWED_HOSTS: sink.host } });
  try {
    const ctx = await createContext(stack, 1, sink.url('/bench'));
    if (row === 'T1') {
      await t1Timeline(ctx, llm.server, runs);
      ctx.api.close();
      await ctx.temporal.connection.close();
      return;
    }
    let workflowId = ctx.workflows[3]!;
    let input: Record<string, unknown> = { n: 1 };
    let bare: { type: string; args: unknown[] } = { type: 'bareLocalWorkflow', args: [3, { n: 1 }] };
    if (row === 'B6') {
      const model = `openai:${MOCK_LLM_MODEL}`;
      const agent = await ctx.api.call<{ id: string }>('POST', '/api/v1/agents', {
        name: 'timeline agent',
        default_prompt: 'Answer briefly.',
        model,
      });
      const steps = ['a1', 'a2', 'a3'].map((id) => ({ id, template_id: agent.data.id, input: { question: 'go' } }));
      workflowId = (await ctx.api.call<{ id: string }>('POST', '/api/v1/workflows', { name: 'timeline', steps })).data
        .id;
      input = {};
      bare = { type: 'bareAgentWorkflow', args: [3, llm.server.baseUrl, model, llm.env.OPENAI_API_KEY] };
    } else if (row === 'B2') {
      // B2's and B3's workflow: three http_request steps to the local sink.
      workflowId = ctx.httpWorkflow;
      input = {};
      bare = { type: 'bareHttpWorkflow', args: [3, sink.url('/bench')] };
    } else if (row !== 'B4') throw new Error(`timeline: B2, B4, B6 or T1, not ${row}`);

    // The arms alternate, as in `npm run bench`, so what the machine does at the time falls on both.
    let last = { runId: '', started: 0, ended: 0 };
    let lastBare = { id: '', started: 0, ended: 0 };
    const mine: Phases[] = [];
    const theirs: Phases[] = [];
    for (let i = 0; i < runs; i++) {
      const started = Date.now();
      const runId = await ctx.api.startRun(workflowId, input);
      await ctx.api.waitForCompletion(runId);
      last = { runId, started, ended: Date.now() };
      const bareStarted = Date.now();
      const id = `timeline-${bare.type}-${process.pid}-${i}`;
      await ctx.temporal.workflow
        .start(bare.type, { taskQueue: stack.bareQueue, workflowId: id, args: bare.args })
        .then((h) => h.result());
      lastBare = { id, started: bareStarted, ended: Date.now() };
      if (i < 2) continue;
      const history = async (client: Client, wid: string) =>
        (await client.workflow.getHandle(wid).fetchHistory()).events ?? [];
      mine.push(phasesOf(await history(ctx.stepwiseTemporal, runId), last.started, last.ended));
      theirs.push(phasesOf(await history(ctx.temporal, id), lastBare.started, lastBare.ended));
    }
    // The Stepwise run's payloads are encrypted, but the history's event types, times and names are not.
    await printHistory(ctx.stepwiseTemporal, last.runId, `Stepwise ${row} run`, last.started, last.ended);
    await printHistory(ctx.temporal, lastBare.id, `bare ${row} arm`, lastBare.started, lastBare.ended);
    process.stdout.write(`\nmedians of ${mine.length} runs each (ms)\n`);
    printMedians('Stepwise', mine);
    printMedians('bare', theirs);
    ctx.api.close();
    await ctx.temporal.connection.close();
  } finally {
    await stack.stop();
    await llm.server.close();
    await sink.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
