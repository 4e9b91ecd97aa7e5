/**
 * C1 and C2, counted rather than timed, so they hold on any machine: the round trips of a run start (the API's MongoDB
 * commands and Temporal calls) and of one step (the worker's MongoDB commands), read from the processes' /metrics
 * (METRICS_ROUND_TRIPS, shared/metrics/round-trips.ts) before and after N runs. docs/benchmarks.md lists every one
 * with its reason; a row fails when a round trip is measured more often per run than that list explains.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseProm } from '../test/helpers/prom-text';
import type { BenchContext, Row } from './arms';
import { MOCK_LLM_MODEL } from './agent-overhead';
import { round } from './stats';

const DOC = path.join(__dirname, '..', 'docs', 'benchmarks.md');

/** `| C1 | \`find workflows\` | 1 | reason |` rows of docs/benchmarks.md (padded or not): row id → round trip → documented count. */
export function documentedRoundTrips(text = fs.readFileSync(DOC, 'utf8')): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const m of text.matchAll(/^\|\s*(C\d[a-z]?)\s*\|\s*`([^`]+)`\s*\|\s*([\d.]+)\s*\|.*\|\s*$/gm)) {
    const row = out.get(m[1]!) ?? new Map<string, number>();
    row.set(m[2]!, (row.get(m[2]!) ?? 0) + Number(m[3]));
    out.set(m[1]!, row);
  }
  return out;
}

/** The round-trip counters of one /metrics scrape: `find runs` (command, collection), `temporal <Method>`. */
export async function roundTrips(url: string): Promise<Map<string, number>> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  const out = new Map<string, number>();
  for (const s of parseProm(await res.text())) {
    const key =
      s.name === 'stepwise_db_commands_total'
        ? `${s.labels.command} ${s.labels.collection}`
        : s.name === 'stepwise_temporal_calls_total'
          ? `temporal ${s.labels.method}`
          : undefined;
    if (key !== undefined) out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

/** Counters of `after` less those of `before` (the ones that moved). */
export function minus(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) !== 0) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

/** The round trips measured more often per run than documented (a round trip with no row is documented 0). */
export function unexplainedRoundTrips(
  perRun: Map<string, number>,
  documented: Map<string, number>,
): [string, number][] {
  return [...perRun].filter(([k, v]) => v > (documented.get(k) ?? 0));
}

/**
 * One counted row: each measured round trip per run against the documented count; a round trip the document does not
 * list counts as documented 0. `exactly` pins round trips that must be measured at that count, no fewer.
 */
function countedRow(
  id: string,
  what: string,
  measured: Map<string, number>,
  runs: number,
  exactly: Record<string, number> = {},
): Row {
  const documented = documentedRoundTrips().get(id) ?? new Map<string, number>();
  const perRun = new Map([...measured].map(([k, v]) => [k, round(v / runs, 2)]));
  const unexplained = unexplainedRoundTrips(perRun, documented);
  const wrongExact = Object.entries(exactly).filter(([k, v]) => (perRun.get(k) ?? 0) !== v);
  const total = (m: Map<string, number>) =>
    round(
      [...m.values()].reduce((a, b) => a + b, 0),
      2,
    );
  const list = (m: Map<string, number>) =>
    [...m]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k} ×${v}`)
      .join(', ');
  return {
    id,
    what: `${what} (${runs} runs): ${list(perRun)}${unexplained.length ? `; NOT IN docs/benchmarks.md: ${list(new Map(unexplained))}` : ''}${wrongExact.length ? `; expected exactly ${JSON.stringify(exactly)}` : ''}`,
    stepwise: `${total(perRun)} round trips/run`,
    bare: `${total(documented)} documented`,
    // Measured ÷ documented: at most 1 when the list explains every round trip (amortized ones are listed at most).
    ratio: total(documented) > 0 ? total(perRun) / total(documented) : NaN,
    target: 'each listed with its reason',
    pass: unexplained.length === 0 && wrongExact.length === 0,
    detail: { perRun: Object.fromEntries(perRun), documented: Object.fromEntries(documented) },
  };
}

/** Run starts counted per row; the first WARMUP starts fill the API's caches (key, templates) and are not counted. */
const RUNS = 20;
const WARMUP = 3;

/**
 * C1: N starts back to back between two scrapes of the API's /metrics, then the runs are waited for (their status
 * reads fall after the second scrape). A scrape's own middleware round trips (rate-limit leases) are measured the
 * same way with no start between and taken off.
 */
export async function c1RunStart(ctx: BenchContext): Promise<Row> {
  const url = `${ctx.stack.apiUrl}/metrics`;
  const start = () => ctx.api.startRun(ctx.httpWorkflow, {});
  for (let i = 0; i < WARMUP; i++) await ctx.api.waitForCompletion(await start());
  const runs = RUNS * ctx.scale;
  const idle0 = await roundTrips(url);
  const idle1 = await roundTrips(url);
  const before = await roundTrips(url);
  const ids: string[] = [];
  for (let i = 0; i < runs; i++) ids.push(await start());
  const after = await roundTrips(url);
  for (const id of ids) await ctx.api.waitForCompletion(id);
  const measured = minus(minus(after, before), minus(idle1, idle0));
  return countedRow('C1', 'round trips of POST …/run in the API', measured, runs, {
    'temporal StartWorkflowExecution': 1,
  });
}

/** N runs of `workflowId` one at a time, the worker's /metrics read before and after; each run waited for to its close. */
async function workerRoundTrips(ctx: BenchContext, workflowId: string, runs: number): Promise<Map<string, number>> {
  const once = async () => {
    const runId = await ctx.api.startRun(workflowId, {});
    await ctx.api.waitForCompletion(runId);
    // The execution closes just after the run's outcome write: every worker round trip of the run is behind it.
    await ctx.stepwiseTemporal.workflow.getHandle(runId).result();
  };
  for (let i = 0; i < WARMUP; i++) await once();
  const before = await roundTrips(ctx.stack.workerMetricsUrl);
  for (let i = 0; i < runs; i++) await once();
  return minus(await roundTrips(ctx.stack.workerMetricsUrl), before);
}

/** C2: the worker's MongoDB commands for a run of one `http_request` step, and of one agent step making one model call. */
export async function c2StepRoundTrips(ctx: BenchContext): Promise<Row[]> {
  const runs = RUNS * ctx.scale;
  const httpTemplate = await ctx.api.systemTemplateId('http_request');
  const httpWorkflow = await ctx.api.createHttpWorkflow(1, httpTemplate, ctx.sinkUrl);
  const agent = await ctx.api.call<{ id: string }>('POST', '/api/v1/agents', {
    name: 'bench counted agent',
    default_prompt: 'Answer briefly.',
    model: `openai:${MOCK_LLM_MODEL}`,
  });
  const agentWorkflow = await ctx.api.call<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'bench counted agent step',
    steps: [{ id: 'a1', template_id: agent.data.id, input: { question: 'go' } }],
  });
  return [
    countedRow(
      'C2a',
      'worker round trips of a run of one http_request step',
      await workerRoundTrips(ctx, httpWorkflow, runs),
      runs,
    ),
    countedRow(
      'C2b',
      'worker round trips of a run of one agent step with one model call',
      await workerRoundTrips(ctx, agentWorkflow.data.id, runs),
      runs,
    ),
  ];
}
