/**
 * B11, growth: the hot reads (status, run search, the per-workflow run list and its second page) with few stored runs
 * and with many, in the same run. The two phases cannot be interleaved — the data only grows — so each takes many
 * samples after a warm-up, the queries of a phase interleaved with one another. Also reported (no target): how the
 * status read grows with a run's steps and a map's width.
 *
 * It fills the database, so it runs last.
 */
import { newId } from '../db/ids';
import type { RunDoc } from '../db/runs';
import type { BenchContext, Row } from './arms';
import { bulkInsert, runsOf, syntheticRun, transcriptEntry, transcriptsOf, type LoadResult } from './growth-data';
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
  /** Path of the request; the second page's is taken from the first page's Link header in each phase. */
  path: () => Promise<string>;
  /** Samples per phase (a query that walks many documents takes fewer). */
  samples: number;
}

type Phase = Record<string, Summary>;

/**
 * Waits until the database, the worker and the API together use under 5 % of a core over 2 s (at most 180 s); returns
 * the seconds waited. Each phase starts on a quiet stack: after a bulk load the database keeps a core busy writing for
 * a while, and before the small phase the worker and the database are still finishing what the rows before B11 and
 * the 1 000-item map left them, which is not what a query costs either.
 */
async function settle(ctx: BenchContext): Promise<number> {
  const { database, worker, api } = ctx.stack.pids;
  const cpu = () => cpuMs(database) + cpuMs(worker) + cpuMs(api);
  const t0 = Date.now();
  while (Date.now() - t0 < 180_000) {
    const c0 = cpu();
    await new Promise((r) => setTimeout(r, 2_000));
    if (cpu() - c0 < 100) break;
  }
  return Math.round((Date.now() - t0) / 1000);
}

/**
 * Queries of a phase interleaved in rotating order, `warmup` rounds discarded; p50 and friends per query. The warm-up
 * is long because in a whole run these queries' paths are new to the database's compiler when the small phase begins
 * (with 20 rounds one run read every row 0.45-0.68x: the small phase slower than the large one).
 */
async function measure(ctx: BenchContext, queries: Query[], warmup = WARMUP_ROUNDS): Promise<Phase> {
  const paths = new Map<string, string>();
  for (const q of queries) paths.set(q.id, await q.path());
  const samples = new Map<string, number[]>(queries.map((q) => [q.id, []]));
  const rounds = Math.max(...queries.map((q) => q.samples * ctx.scale));
  for (let r = 0; r < rounds + warmup; r++) {
    const due = queries.filter((q) => r < q.samples * ctx.scale + warmup);
    for (let k = 0; k < due.length; k++) {
      const q = due[(r + k) % due.length]!;
      const t = await timed(() => ctx.api.call('GET', paths.get(q.id)!));
      if (r >= warmup) samples.get(q.id)!.push(t);
    }
  }
  return Object.fromEntries(queries.map((q) => [q.id, summarize(samples.get(q.id)!)]));
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
    path: () => Promise.resolve(`/api/v1/workflows/runs/${runId}/status`),
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
      path: () => Promise.resolve(`/api/v1/workflows/runs/${real[0]}/status`),
      samples: 150,
    },
    {
      id: 'B11b',
      what: 'run search: GET /runs?status=completed&workflow_id=… first page',
      path: () => Promise.resolve(`/api/v1/runs?status=completed&workflow_id=${workflowId}`),
      samples: 150,
    },
    {
      id: 'B11c',
      what: 'run list: GET /workflows/:id/runs first page',
      path: () => Promise.resolve(runList),
      samples: 150,
    },
    {
      id: 'B11d',
      what: 'run list: GET /workflows/:id/runs second page (keyset cursor)',
      path: async () => {
        const next = (await ctx.api.page(runList)).next;
        if (!next) throw new Error(`${runList}: no second page`);
        return next;
      },
      samples: 150,
    },
    {
      // A derived status: stored in-flight statuses ($in of three), then told apart by the steps. The workflow has
      // none in flight, so this walks every one of its runs unless the plan narrows by status.
      id: 'B11e',
      what: 'run search: GET /runs?status=running&workflow_id=… (none in flight) first page',
      path: () => Promise.resolve(`/api/v1/runs?status=running&workflow_id=${workflowId}`),
      samples: 20,
    },
  ];

  log(`small phase: ${await runsOf(db).countDocuments({ owner_id: owner.ownerId })} runs of the bench user`);
  log(`stack quiet after ${await settle(ctx)} s`);
  const small = await measure(ctx, queries);
  const smallShapes = await measure(ctx, statusQueries(shapes), 50);

  // --- large: the bench user's runs up to LARGE_RUNS (nine in ten of this workflow), other users', transcripts ---
  const userRuns = await runsOf(db).countDocuments({ owner_id: owner.ownerId });
  const otherWorkflows = Array.from({ length: 5 }, () => ({ ...owner, workflowId: newId('wf') }));
  const synthetic: string[] = [];
  let ofWorkflow = await runsOf(db).countDocuments({ owner_id: owner.ownerId, workflow_id: workflowId });
  const keep = (run: RunDoc) => {
    synthetic.push(run._id);
    if (run.owner_id === owner.ownerId && run.workflow_id === workflowId) ofWorkflow++;
    return run;
  };
  log(`storing ${LARGE_RUNS - userRuns} runs of the bench user and ${OTHER_USERS_RUNS} of other users…`);
  const runLoad = await bulkInsert(
    runsOf(db),
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
  const otherLoad = await bulkInsert(runsOf(db), OTHER_USERS_RUNS, (i) =>
    keep(syntheticRun(template, others[i % others.length]!, i, { before, spreadDays: 365, inFlight: true })),
  );
  log(`storing up to ${TRANSCRIPT_ENTRIES} transcript entries (at most ${TRANSCRIPT_BUDGET_SECONDS} s)…`);
  const at = new Date();
  const entries = Math.min(TRANSCRIPT_ENTRIES, synthetic.length * ENTRIES_PER_RUN);
  const transcriptLoad = await bulkInsert(
    transcriptsOf(db),
    entries,
    (i) => transcriptEntry(synthetic[Math.floor(i / ENTRIES_PER_RUN)]!, i % ENTRIES_PER_RUN, at),
    { budgetSeconds: TRANSCRIPT_BUDGET_SECONDS, progress: (n) => log(`${n} transcript entries`) },
  );
  const stored = {
    // Counted as inserted: the embedded server answers countDocuments by materialising every matching document, and
    // 100 000 runs of a few KiB each exhaust its heap (the first run of B11 died there).
    userRuns: userRuns + runLoad.inserted,
    workflowRuns: ofWorkflow,
    allRuns: await runsOf(db).estimatedDocumentCount(),
    transcripts: await transcriptsOf(db).estimatedDocumentCount(),
  };
  log(`large phase: ${JSON.stringify(stored)}`);
  // The database server writes out for a while after a bulk load: measured once it is quiet, as it would be.
  log(`stack quiet after ${await settle(ctx)} s`);
  const large = await measure(ctx, queries);
  const largeShapes = await measure(ctx, statusQueries(shapes), 50);

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
    const ratio = large[q.id]!.p50 / small[q.id]!.p50;
    return {
      id: q.id,
      what:
        `growth, ${q.what}: ${stored.userRuns} runs of the user (${stored.workflowRuns} of the workflow, ${stored.allRuns} in all), ` +
        `${transcriptsNote} ÷ ${SMALL_RUNS} runs` +
        (i === 0 ? `; ${line}` : ''),
      stepwise: `${stored.userRuns} runs: ${ms(large[q.id]!)}`,
      bare: `${SMALL_RUNS} runs: ${ms(small[q.id]!)}`,
      ratio,
      target: '≤ 1.2×',
      pass: ratio <= 1.2,
      detail: {
        small: small[q.id],
        large: large[q.id],
        stored,
        ...(i === 0 ? { loads, statusByShape: { small: smallShapes, large: largeShapes } } : {}),
      },
    };
  });
}
