/**
 * B11, growth: the hot reads (status, run search, the per-workflow run list and its second page) with few stored runs
 * and with many. The data only grows, so once the small data set is stored it is copied into two more databases on
 * the same server, each read by an API process of its own; the large data set then grows in one of them, and the two
 * are read side by side, each round asking both APIs every query in alternating order, so that whatever the machine is
 * doing then (a compiler, a collection, another process) falls on both sides alike. Before the load the two copies are
 * read the same way: that ratio, printed beside each row, is what the method itself adds. Also reported (no target):
 * how the status read grows with a run's steps and a map's width.
 *
 * It fills the database, so it runs last.
 */
import { newId } from '../db/ids';
import type { RunDoc } from '../db/runs';
import { ApiClient } from './api-client';
import type { BenchContext, Row } from './arms';
import {
  bulkInsert,
  copyDatabase,
  runsOf,
  syntheticRun,
  transcriptEntry,
  transcriptsOf,
  type LoadResult,
} from './growth-data';
import { round, summarize, timed, type Summary } from './stats';
import { cpuMs } from './stack';

const SMALL_RUNS = 100;
const LARGE_RUNS = 100_000;
/** Runs of other users beside them: the owner filter must skip them, not read them. */
const OTHER_USERS_RUNS = 10_000;
const TRANSCRIPT_ENTRIES = 1_000_000;
const ENTRIES_PER_RUN = 10;
/**
 * The embedded server stores 3 000–6 000 entries/s on a 2-core machine (a million in 3–6 min): the load stops after
 * this long and the rows state the count reached.
 */
const TRANSCRIPT_BUDGET_SECONDS = 240;
const REAL_RUNS = 5;
/** Untimed rounds before each phase's samples (see measure). */
const WARMUP_ROUNDS = 200;
const STEPS = [1, 10, 50];
const WIDTHS = [10, 100, 1000];

interface Query {
  id: string;
  what: string;
  /** Path of the request; the second page's is taken from the first page's Link header of each API. */
  path: (api: ApiClient) => Promise<string>;
  /** Samples per phase and side (the reads by run size take fewer). */
  samples: number;
}

type Phase = Record<string, Summary>;

/**
 * Waits until the database, the worker and the APIs together use under 5 % of a core over 2 s (at most 180 s);
 * returns the seconds waited. Each phase starts on a quiet stack: after a bulk load the database keeps a core busy
 * writing for a while, and before the first phase the worker and the database are still finishing what the rows
 * before B11 and the 1 000-item map left them, which is not what a query costs either.
 */
async function settle(pids: number[]): Promise<number> {
  const cpu = () => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const t0 = Date.now();
  while (Date.now() - t0 < 180_000) {
    const c0 = cpu();
    await new Promise((r) => setTimeout(r, 2_000));
    if (cpu() - c0 < 100) break;
  }
  return Math.round((Date.now() - t0) / 1000);
}

/**
 * The queries through two APIs side by side: each round asks every due query of both, the queries in rotating order
 * and the two APIs in alternating order, `warmup` rounds discarded; p50 and friends per query and API. The warm-up is
 * long because in a whole run these queries' paths are new to the database's compiler when B11 begins (with 20 rounds
 * one run read every row 0.45-0.68x).
 */
async function measure(
  ctx: BenchContext,
  apis: [ApiClient, ApiClient],
  queries: Query[],
  warmup = WARMUP_ROUNDS,
): Promise<[Phase, Phase]> {
  const sides = await Promise.all(
    apis.map(async (api) => {
      const paths = new Map<string, string>();
      for (const q of queries) paths.set(q.id, await q.path(api));
      return { api, paths, samples: new Map<string, number[]>(queries.map((q) => [q.id, []])) };
    }),
  );
  const rounds = Math.max(...queries.map((q) => q.samples * ctx.scale));
  for (let r = 0; r < rounds + warmup; r++) {
    const due = queries.filter((q) => r < q.samples * ctx.scale + warmup);
    for (let k = 0; k < due.length; k++) {
      const q = due[(r + k) % due.length]!;
      for (const side of (r + k) % 2 === 0 ? sides : [...sides].reverse()) {
        const t = await timed(() => side.api.call('GET', side.paths.get(q.id)!));
        if (r >= warmup) side.samples.get(q.id)!.push(t);
      }
    }
  }
  const phase = (side: (typeof sides)[number]): Phase =>
    Object.fromEntries(queries.map((q) => [q.id, summarize(side.samples.get(q.id)!)]));
  return [phase(sides[0]!), phase(sides[1]!)];
}

async function completedRun(ctx: BenchContext, workflowId: string, input: Record<string, unknown>): Promise<string> {
  const runId = await ctx.api.startRun(workflowId, input);
  await ctx.api.waitForCompletion(runId);
  return runId;
}

/** One completed run per number of steps and per map width, to read the status of. */
async function shapeRuns(ctx: BenchContext, transformId: string): Promise<Record<string, string>> {
  const runs: Record<string, string> = {};
  for (const n of STEPS)
    runs[`steps ${n}`] = await completedRun(ctx, await ctx.api.createTransformWorkflow(n, transformId), { n });
  const { data } = await ctx.api.call<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'bench map width',
    steps: [
      {
        id: 'items',
        template_id: transformId,
        map: { over: '{{input.items}}', concurrency: 20 },
        config: { expression: '{"value": data}', data: '{{map.item}}' },
      },
    ],
  });
  for (const w of WIDTHS) {
    runs[`width ${w}`] = await completedRun(ctx, data.id, { items: Array.from({ length: w }, (_, i) => i) });
  }
  return runs;
}

const statusQueries = (runs: Record<string, string>): Query[] =>
  Object.entries(runs).map(([label, runId]) => ({
    id: label,
    what: `status of a run of ${label}`,
    path: async () => `/api/v1/workflows/runs/${runId}/status`,
    samples: 40,
  }));

export async function b11Growth(ctx: BenchContext): Promise<Row[]> {
  const db = ctx.stack.database.db;
  const log = (m: string) => process.stderr.write(`[bench] B11: ${m}\n`);
  const transformId = await ctx.api.systemTemplateId('transform');
  const workflowId = await ctx.api.createTransformWorkflow(3, transformId);
  const real: string[] = [];
  for (let i = 0; i < REAL_RUNS; i++) real.push(await completedRun(ctx, workflowId, { n: i }));
  const template = await runsOf(db).findOne({ _id: real[0]! });
  if (!template) throw new Error(`run ${real[0]} not stored`);
  const owner = { ownerId: ctx.stack.userId, workflowId, workflowName: template.workflow_name };
  const before = template.created_at;

  const have = await runsOf(db).countDocuments({ owner_id: owner.ownerId, workflow_id: workflowId });
  await bulkInsert(runsOf(db), SMALL_RUNS - have, (i) =>
    syntheticRun(template, owner, i, { before, spreadDays: 30, inFlight: false }),
  );
  const shapes = await shapeRuns(ctx, transformId);

  const runList = `/api/v1/workflows/${workflowId}/runs`;
  const queries: Query[] = [
    {
      id: 'B11a',
      what: 'status read: GET /workflows/runs/:id/status of a completed 3-step run',
      path: async () => `/api/v1/workflows/runs/${real[0]}/status`,
      samples: 150,
    },
    {
      id: 'B11b',
      what: 'run search: GET /runs?status=completed&workflow_id=… first page',
      path: async () => `/api/v1/runs?status=completed&workflow_id=${workflowId}`,
      samples: 150,
    },
    {
      id: 'B11c',
      what: 'run list: GET /workflows/:id/runs first page',
      path: async () => runList,
      samples: 150,
    },
    {
      id: 'B11d',
      what: 'run list: GET /workflows/:id/runs second page (keyset cursor)',
      path: async (api) => {
        const next = (await api.page(runList)).next;
        if (!next) throw new Error(`${runList}: no second page`);
        return next;
      },
      samples: 150,
    },
    {
      // A derived status: stored in-flight statuses ($in of three), then told apart by the steps. The workflow has
      // none in flight, so this walks every one of its runs unless the plan narrows by status (it does: as many
      // samples as the others; with 20, its ratio of the same data on both sides read 0.98-1.18x).
      id: 'B11e',
      what: 'run search: GET /runs?status=running&workflow_id=… (none in flight) first page',
      path: async () => `/api/v1/runs?status=running&workflow_id=${workflowId}`,
      samples: 150,
    },
  ];

  // Both sides are copies made the same way, so that they start from the same layout on disk: a copy is stored
  // densely, the original as the rows before B11 updated it (one first try read the copy 4-11 % faster than its
  // original, the same data).
  const sides = await Promise.all(
    (['large', 'small'] as const).map(async (side) => {
      const name = `${ctx.stack.dbName}_b11_${side}`;
      const copy = ctx.stack.database.client.db(name);
      const copied = await copyDatabase(db, copy);
      const api = await ctx.stack.addApi(`api-b11-${side}`, name);
      return { db: copy, copied, pid: api.pid, client: new ApiClient(api.url, ctx.stack.apiKey) };
    }),
  );
  const [largeSide, smallSide] = sides as [(typeof sides)[number], (typeof sides)[number]];
  const apis: [ApiClient, ApiClient] = [largeSide.client, smallSide.client];
  const { database, worker, api } = ctx.stack.pids;
  const quiet = () => settle([database, worker, api, largeSide.pid, smallSide.pid]);
  log(
    `small data set: ${await runsOf(db).countDocuments({ owner_id: owner.ownerId })} runs of the bench user; ` +
      `${smallSide.copied} documents copied to two databases, each read by an API of its own`,
  );
  log(`stack quiet after ${await quiet()} s`);
  // The same data through both APIs: how far apart the two sides read when nothing differs.
  const [sameLarge, sameSmall] = await measure(ctx, apis, queries);
  const sameData = Object.fromEntries(queries.map((q) => [q.id, sameLarge[q.id]!.p50 / sameSmall[q.id]!.p50]));
  log(`same data through both APIs, p50 ratios: ${JSON.stringify(mapValues(sameData, (v) => round(v, 2)))}`);

  // --- large: the bench user's runs up to LARGE_RUNS (nine in ten of this workflow), other users', transcripts ---
  const large = largeSide.db;
  const userRuns = await runsOf(large).countDocuments({ owner_id: owner.ownerId });
  const otherWorkflows = Array.from({ length: 5 }, () => ({ ...owner, workflowId: newId('wf') }));
  const synthetic: string[] = [];
  let ofWorkflow = await runsOf(large).countDocuments({ owner_id: owner.ownerId, workflow_id: workflowId });
  const keep = (run: RunDoc) => {
    synthetic.push(run._id);
    if (run.owner_id === owner.ownerId && run.workflow_id === workflowId) ofWorkflow++;
    return run;
  };
  log(`storing ${LARGE_RUNS - userRuns} runs of the bench user and ${OTHER_USERS_RUNS} of other users…`);
  const runLoad = await bulkInsert(
    runsOf(large),
    LARGE_RUNS - userRuns,
    (i) =>
      keep(
        syntheticRun(template, i % 10 === 9 ? otherWorkflows[i % 5]! : owner, i, {
          before,
          spreadDays: 365,
          inFlight: false,
        }),
      ),
    { progress: (n) => log(`${n} runs`) },
  );
  const others = Array.from({ length: 10 }, () => ({ ...owner, ownerId: newId('usr'), workflowId: newId('wf') }));
  const otherLoad = await bulkInsert(runsOf(large), OTHER_USERS_RUNS, (i) =>
    keep(syntheticRun(template, others[i % others.length]!, i, { before, spreadDays: 365, inFlight: true })),
  );
  log(`storing up to ${TRANSCRIPT_ENTRIES} transcript entries (at most ${TRANSCRIPT_BUDGET_SECONDS} s)…`);
  const at = new Date();
  const entries = Math.min(TRANSCRIPT_ENTRIES, synthetic.length * ENTRIES_PER_RUN);
  const transcriptLoad = await bulkInsert(
    transcriptsOf(large),
    entries,
    (i) => transcriptEntry(synthetic[Math.floor(i / ENTRIES_PER_RUN)]!, i % ENTRIES_PER_RUN, at),
    { budgetSeconds: TRANSCRIPT_BUDGET_SECONDS, progress: (n) => log(`${n} transcript entries`) },
  );
  const stored = {
    // Counted as inserted: the embedded server answers countDocuments by materialising every matching document, and
    // 100 000 runs of a few KiB each exhaust its heap (the first run of B11 died there).
    userRuns: userRuns + runLoad.inserted,
    workflowRuns: ofWorkflow,
    allRuns: await runsOf(large).estimatedDocumentCount(),
    transcripts: await transcriptsOf(large).estimatedDocumentCount(),
  };
  log(`large phase: ${JSON.stringify(stored)}`);
  // The database server writes out for a while after a bulk load: measured once it is quiet, as it would be.
  log(`stack quiet after ${await quiet()} s`);
  const [largePhase, smallPhase] = await measure(ctx, apis, queries);
  const [largeShapes, smallShapes] = await measure(ctx, apis, statusQueries(shapes), 50);
  for (const api of apis) api.close();

  const ms = (s: Summary) => `p50 ${round(s.p50, 1)} ms`;
  const growth = (label: string) =>
    `${label.split(' ')[1]}→${round(smallShapes[label]!.p50, 1)}/${round(largeShapes[label]!.p50, 1)}`;
  const line =
    `status read p50 (ms, ${SMALL_RUNS} / ${stored.userRuns} runs) by steps N ${STEPS.map((n) => growth(`steps ${n}`)).join(', ')}; ` +
    `by map width ${WIDTHS.map((w) => growth(`width ${w}`)).join(', ')}`;
  process.stdout.write(`B11 ${line}\n`);
  const transcriptsNote = transcriptLoad.cut
    ? `${transcriptLoad.inserted} transcript entries (cut at ${TRANSCRIPT_BUDGET_SECONDS} s: ${round(transcriptLoad.perSecond, 0)}/s, ≈ ${round(TRANSCRIPT_ENTRIES / transcriptLoad.perSecond / 60, 1)} min for ${TRANSCRIPT_ENTRIES})`
    : `${transcriptLoad.inserted} transcript entries`;
  const loads: Record<string, LoadResult> = { runs: runLoad, otherUsersRuns: otherLoad, transcripts: transcriptLoad };
  return queries.map((q, i) => {
    const ratio = largePhase[q.id]!.p50 / smallPhase[q.id]!.p50;
    return {
      id: q.id,
      what:
        `growth, ${q.what}: ${stored.userRuns} runs of the user (${stored.workflowRuns} of the workflow, ${stored.allRuns} in all), ` +
        `${transcriptsNote} ÷ ${SMALL_RUNS} runs (two copies of the same data, one grown, read side by side by an API each)` +
        (i === 0 ? `; ${line}` : ''),
      stepwise: `${stored.userRuns} runs: ${ms(largePhase[q.id]!)}`,
      bare: `${SMALL_RUNS} runs: ${ms(smallPhase[q.id]!)} (same data on both sides: ${round(sameData[q.id]!, 2)}×)`,
      ratio,
      target: '≤ 1.2×',
      pass: ratio <= 1.2,
      detail: {
        small: smallPhase[q.id],
        large: largePhase[q.id],
        stored,
        sameDataRatio: sameData[q.id],
        ...(i === 0 ? { loads, statusByShape: { small: smallShapes, large: largeShapes } } : {}),
      },
    };
  });
}

const mapValues = <T, U>(o: Record<string, T>, f: (v: T) => U): Record<string, U> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
