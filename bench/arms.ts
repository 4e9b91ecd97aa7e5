/**
 * Each row of the benchmark table in docs/benchmarks.md as one function returning a row: arms measured side by side in
 * the same run, reduced to a ratio of Stepwise to the row's reference arm. Absolute times, and the other reference
 * arms (bare Temporal beside the hand-written service), are printed only as context.
 */
import autocannon from 'autocannon';
import { Client, Connection } from '@temporalio/client';
import { createDataConverter } from '../shared/codec/data-converter';
import { parseCodecKeys } from '../domain/codec-keys';
import { ApiClient } from './api-client';
import { HandWrittenClient } from './hand-written/client';
import { seed as seedHandWritten } from './hand-written/store';
import { cpuMs, rssMiB, type BenchStack } from './stack';
import { interleave, interleaveArms, round, summarize, timed } from './stats';

export interface Row {
  id: string;
  what: string;
  stepwise: string;
  /** The reference arm's figures (and any other reference printed beside them); `ratio` is Stepwise ÷ this arm. */
  bare: string;
  ratio: number;
  target: string;
  pass: boolean;
  detail: Record<string, unknown>;
}

export interface BenchContext {
  stack: BenchStack;
  api: ApiClient;
  /** Plain client for the bare workflows (their worker has no codec). */
  temporal: Client;
  /** Client with the deployment's payload codec, to read Stepwise runs (their memo and payloads are encrypted). */
  stepwiseTemporal: Client;
  workflows: Record<number, string>;
  /** B2/B3: a workflow of three `http_request` steps, each a GET of `sinkUrl` (the local HTTP sink). */
  httpWorkflow: string;
  /** B1/B3/B8's reference: the hand-written service (bench/hand-written/), seeded with the same 3-GET workflow. */
  hand: HandWrittenClient;
  sinkUrl: string;
  scale: number;
}

export async function createContext(stack: BenchStack, scale: number, sinkUrl: string): Promise<BenchContext> {
  const api = new ApiClient(stack.apiUrl, stack.apiKey);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection });
  const stepwiseTemporal = new Client({
    connection,
    dataConverter: createDataConverter(parseCodecKeys(stack.codecKeys).keys),
  });
  const transform = await api.systemTemplateId('transform');
  const workflows: Record<number, string> = {};
  for (const n of [1, 3, 10]) workflows[n] = await api.createTransformWorkflow(n, transform);
  const httpWorkflow = await api.createHttpWorkflow(3, await api.systemTemplateId('http_request'), sinkUrl);
  const handDb = stack.database.client.db(stack.handWritten.dbName);
  const handSeed = await seedHandWritten(handDb, [sinkUrl, sinkUrl, sinkUrl]);
  const hand = new HandWrittenClient(stack.handWritten.url, handSeed.key, handSeed.workflowId);
  return { stack, api, temporal, stepwiseTemporal, workflows, httpWorkflow, hand, sinkUrl, scale };
}

let seq = 0;
const bareStart = (ctx: BenchContext, steps: number) =>
  ctx.temporal.workflow.start('bareWorkflow', {
    taskQueue: ctx.stack.bareQueue,
    workflowId: `bare-${process.pid}-${++seq}`,
    args: [steps, { n: seq }],
  });

/**
 * B2/B3's arms, one run each: three `http_request` steps via the API, the same three requests through the hand-written
 * service, and as three request activities on bare Temporal.
 */
const stepwiseHttpRun = async (ctx: BenchContext): Promise<void> =>
  ctx.api.waitForCompletion(await ctx.api.startRun(ctx.httpWorkflow, {}));
const handHttpRun = async (ctx: BenchContext): Promise<void> => ctx.hand.waitForCompletion(await ctx.hand.startRun({}));
const bareHttpStart = (ctx: BenchContext) =>
  ctx.temporal.workflow.start('bareHttpWorkflow', {
    taskQueue: ctx.stack.bareQueue,
    workflowId: `bare-http-${process.pid}-${++seq}`,
    args: [3, ctx.sinkUrl],
  });
const bareHttpRun = async (ctx: BenchContext): Promise<unknown> => (await bareHttpStart(ctx)).result();

const ms = (v: number) => `${round(v, 1)} ms`;

export async function b0Calibration(ctx: BenchContext): Promise<Row> {
  const n = 30 * ctx.scale;
  const cpu0 = cpuMs(ctx.stack.pids.bareWorker);
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await timed(async () => (await bareStart(ctx, 1)).result()));
  const cpu = (cpuMs(ctx.stack.pids.bareWorker) - cpu0) / n;
  const s = summarize(samples);
  return {
    id: 'B0',
    what: 'calibration: bare client + minimal worker, 1-activity workflow, one at a time',
    stepwise: '-',
    bare: `${round(1000 / s.mean, 1)} runs/s, p50 ${ms(s.p50)}, ${round(cpu, 1)} CPU-ms/run`,
    ratio: 1,
    target: '(reference)',
    pass: true,
    detail: { latency: s, cpuMsPerRun: cpu },
  };
}

/**
 * B1 times the start alone, and each sample then waits (untimed) for its run to finish, so that no sample is measured
 * while the run started by the one before is still at work: a start lands on the next sample otherwise — of another
 * arm, as often as not. All three arms start the same workflow of three GETs of the sink.
 * It measures after B1_WARMUP untimed rounds: B1 is the first row to reach the APIs and the database, and their
 * compilers were still speeding starts up well past the first 5 (blocks of 20 rounds: p50 15, 10, 7.9, 8.1, 6.8, 6.4,
 * 6.8, 5.7 ms for Stepwise's).
 */
const B1_WARMUP = 100;

export async function b1StartPath(ctx: BenchContext): Promise<Row> {
  const settled = async <T>(start: () => Promise<T>, finish: (started: T) => Promise<unknown>): Promise<number> => {
    let started: T | undefined;
    const ms = await timed(async () => (started = await start()));
    await finish(started as T);
    return ms;
  };
  const [a, h, b] = await interleaveArms(
    60 * ctx.scale,
    [
      () =>
        settled(
          () => ctx.api.startRun(ctx.httpWorkflow, { n: 1 }),
          (runId) => ctx.api.waitForCompletion(runId),
        ),
      () =>
        settled(
          () => ctx.hand.startRun({ n: 1 }),
          (runId) => ctx.hand.waitForCompletion(runId),
        ),
      () =>
        settled(
          () => bareHttpStart(ctx),
          (handle) => handle.result(),
        ),
    ],
    B1_WARMUP,
  );
  const sa = summarize(a!);
  const sh = summarize(h!);
  const sb = summarize(b!);
  const ratio = sa.p50 / sh.p50;
  return {
    id: 'B1',
    what: 'start path: POST …/run ÷ the hand-written start (auth, workflow read, run insert, Temporal start); bare client.workflow.start() beside it',
    stepwise: `p50 ${ms(sa.p50)}`,
    bare: `hand-written p50 ${ms(sh.p50)}; bare start p50 ${ms(sb.p50)} (Stepwise ÷ it ${round(sa.p50 / sb.p50, 2)}×)`,
    ratio,
    target: 'p50 ≤ 1.3×',
    pass: ratio <= 1.3,
    detail: { stepwise: sa, handWritten: sh, bare: sb, stepwiseOverBare: sa.p50 / sb.p50 },
  };
}

export async function b2EndToEnd(ctx: BenchContext): Promise<Row> {
  const { a, b } = await interleave(
    40 * ctx.scale,
    () => timed(() => stepwiseHttpRun(ctx)),
    () => timed(() => bareHttpRun(ctx)),
  );
  const sa = summarize(a);
  const sb = summarize(b);
  const ratio = sa.p50 / sb.p50;
  const ratio99 = sa.p99 / sb.p99;
  return {
    id: 'B2',
    what: 'end to end, unloaded: 3 http_request steps to the local sink via API (start + status) ÷ bare start + result() of 3 activities making the same requests',
    stepwise: `p50 ${ms(sa.p50)}, p99 ${ms(sa.p99)}`,
    bare: `p50 ${ms(sb.p50)}, p99 ${ms(sb.p99)}`,
    ratio,
    target: 'p50 ≤ 1.3×, p99 ≤ 1.5×',
    pass: ratio <= 1.3 && ratio99 <= 1.5,
    detail: { stepwise: sa, bare: sb, p99Ratio: ratio99 },
  };
}

/** Closed loop at `concurrency` for `seconds`; returns completed runs. */
async function closedLoop(concurrency: number, seconds: number, once: () => Promise<unknown>): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await once();
        done++;
      }
    }),
  );
  return done;
}

/** CPU-ms of every process of the bench (this one is the client of every arm), for a breakdown of a row. */
function cpuByProcess(ctx: BenchContext): Record<string, number> {
  const { pids } = ctx.stack;
  const own = process.cpuUsage();
  return {
    api: cpuMs(pids.api),
    worker: cpuMs(pids.worker),
    handApi: cpuMs(pids.handApi),
    handWorker: cpuMs(pids.handWorker),
    bareWorker: cpuMs(pids.bareWorker),
    database: cpuMs(pids.database),
    temporal: cpuMs(pids.temporal),
    client: (own.user + own.system) / 1000,
  };
}

type SaturationArm = 'stepwise' | 'hand' | 'bare';
/** The processes each arm's run uses: B8 sums them (the bench's client, the load generator, is in none). */
const ARM_PROCESSES: Record<SaturationArm, string[]> = {
  stepwise: ['api', 'worker', 'database', 'temporal'],
  hand: ['handApi', 'handWorker', 'database', 'temporal'],
  bare: ['bareWorker', 'temporal'],
};
/** Untimed, before the slices: every arm's processes and the database compiled and warm, also under `--only B3`. */
const B3_WARMUP_SECONDS = 3;

export async function b3Saturation(ctx: BenchContext): Promise<Row[]> {
  const slices = 2 * ctx.scale;
  const seconds = 6;
  const concurrency = 10;
  const arms: Record<SaturationArm, () => Promise<unknown>> = {
    stepwise: () => stepwiseHttpRun(ctx),
    hand: () => handHttpRun(ctx),
    bare: () => bareHttpRun(ctx),
  };
  const order = Object.keys(arms) as SaturationArm[];
  for (const arm of order) await closedLoop(concurrency, B3_WARMUP_SECONDS, arms[arm]);
  const runs: Record<SaturationArm, number> = { stepwise: 0, hand: 0, bare: 0 };
  // Where each arm's CPU goes, per completed run: the saturation limit on a shared two-core box.
  const cpu: Record<SaturationArm, Record<string, number>> = { stepwise: {}, hand: {}, bare: {} };
  for (let i = 0; i < slices; i++) {
    for (let k = 0; k < order.length; k++) {
      const arm = order[(i + k) % order.length]!;
      const before = cpuByProcess(ctx);
      runs[arm] += await closedLoop(concurrency, seconds, arms[arm]);
      const after = cpuByProcess(ctx);
      for (const name of Object.keys(after)) cpu[arm][name] = (cpu[arm][name] ?? 0) + after[name]! - before[name]!;
    }
  }
  const perRun = (arm: SaturationArm) =>
    Object.fromEntries(Object.entries(cpu[arm]).map(([name, used]) => [name, round(used / runs[arm], 1)]));
  const total = (arm: SaturationArm) => ARM_PROCESSES[arm].reduce((sum, name) => sum + cpu[arm][name]!, 0) / runs[arm];
  const breakdown = (arm: SaturationArm) =>
    ARM_PROCESSES[arm].map((name) => `${name} ${round(cpu[arm][name]! / runs[arm], 1)}`).join(', ');
  const rss = (names: (keyof BenchContext['stack']['pids'])[]) =>
    names.map((name) => `${name} ${round(rssMiB(ctx.stack.pids[name]), 0)}`).join(', ');
  const rate = (arm: SaturationArm) => runs[arm] / (slices * seconds);
  const cpuRatio = total('stepwise') / total('hand');
  return [
    {
      id: 'B3',
      what: `saturation: runs/s of B2's workflow (3 http_request steps) via API with status polling, ${concurrency} in flight ÷ the hand-written service, same requests, same polling; bare Temporal beside it`,
      stepwise: `${round(rate('stepwise'), 1)} runs/s`,
      bare: `hand-written ${round(rate('hand'), 1)} runs/s; bare Temporal ${round(rate('bare'), 1)} runs/s`,
      ratio: rate('stepwise') / rate('hand'),
      target: '≥ 0.7×',
      pass: rate('stepwise') / rate('hand') >= 0.7,
      detail: {
        runs,
        seconds: slices * seconds,
        stepwiseOverBare: rate('stepwise') / rate('bare'),
        cpuMsPerRun: { stepwise: perRun('stepwise'), handWritten: perRun('hand'), bare: perRun('bare') },
      },
    },
    {
      id: 'B8',
      what: 'footprint: CPU-ms per completed run during B3, API + worker + database + Temporal ÷ the same of the hand-written service (RSS in MiB)',
      stepwise: `${round(total('stepwise'), 1)} CPU-ms/run (${breakdown('stepwise')}); RSS ${rss(['api', 'worker'])}`,
      bare: `hand-written ${round(total('hand'), 1)} CPU-ms/run (${breakdown('hand')}), RSS ${rss(['handApi', 'handWorker'])}; bare Temporal ${round(total('bare'), 1)} CPU-ms/run (${breakdown('bare')}), RSS ${rss(['bareWorker'])}`,
      ratio: cpuRatio,
      target: 'CPU ≤ 1.5×',
      pass: cpuRatio <= 1.5,
      detail: {
        cpuMsPerRun: { stepwise: total('stepwise'), handWritten: total('hand'), bare: total('bare') },
        processes: ARM_PROCESSES,
        rssMiB: Object.fromEntries(Object.entries(ctx.stack.pids).map(([name, pid]) => [name, round(rssMiB(pid), 0)])),
      },
    },
  ];
}

/**
 * B4, with what was B9: a `transform` step runs as a local activity, so its bare counterpart is a workflow of as many
 * local activities doing nothing. The engine's cost per step is Stepwise's slope over N minus that workflow's.
 */
export async function b4PerStep(ctx: BenchContext): Promise<Row> {
  const p50: Record<number, number> = {};
  const bareP50: Record<number, number> = {};
  const transitions: Record<number, number> = {};
  for (const n of [1, 3, 10]) {
    let runId = '';
    const { a, b } = await interleave(
      12 * ctx.scale,
      () =>
        timed(async () => {
          runId = await ctx.api.startRun(ctx.workflows[n]!, { n });
          await ctx.api.waitForCompletion(runId);
        }),
      () =>
        timed(async () =>
          (
            await ctx.temporal.workflow.start('bareLocalWorkflow', {
              taskQueue: ctx.stack.bareQueue,
              workflowId: `bare-local-${process.pid}-${++seq}`,
              args: [n, { n }],
            })
          ).result(),
        ),
      2,
    );
    p50[n] = summarize(a).p50;
    bareP50[n] = summarize(b).p50;
    const described = await ctx.stepwiseTemporal.workflow.getHandle(runId).describe();
    transitions[n] = Number(described.raw.workflowExecutionInfo?.stateTransitionCount ?? NaN);
  }
  // What a step costs beyond a bare local activity: Stepwise's slope minus the bare workflow's slope.
  const slope = (p50[10]! - p50[1]!) / 9;
  const bareSlope = (bareP50[10]! - bareP50[1]!) / 9;
  const engineCost = slope - bareSlope;
  const budget = (n: number) => 3 + 4 * n;
  const transitionsOk = [1, 3, 10].every((n) => transitions[n]! <= budget(n));
  return {
    id: 'B4',
    what: 'per-step engine cost: e2e slope over N = 1, 3, 10 transform steps minus the slope of bare local activities; state transitions per run; whole runs ÷ bare at each N',
    stepwise: `${round(slope, 1)} ms/step (engine ${round(engineCost, 1)}); transitions ${[1, 3, 10].map((n) => `${n}→${transitions[n]}`).join(', ')}`,
    bare: `${round(bareSlope, 1)} ms/step; budget ${[1, 3, 10].map((n) => `${n}→${budget(n)}`).join(', ')}; runs ${[1, 3, 10].map((n) => `${n}: ${round(p50[n]! / bareP50[n]!, 2)}×`).join(', ')}`,
    ratio: slope / bareSlope,
    target: '≤ 3 + 4N transitions; engine cost per step p50 ≤ 10 ms',
    pass: transitionsOk && engineCost <= 10,
    detail: { p50, bareP50, transitions, slopeMsPerStep: slope, bareSlopeMsPerStep: bareSlope, engineCost },
  };
}

export async function b5StatusRead(ctx: BenchContext): Promise<Row> {
  const runId = await ctx.api.startRun(ctx.workflows[3]!, { n: 1 });
  await ctx.api.waitForCompletion(runId);
  const agentId = (await ctx.api.call<{ id: string }[]>('GET', '/api/v1/agents?limit=1')).data[0]!.id;
  const { a, b } = await interleave(
    150 * ctx.scale,
    () => timed(() => ctx.api.status(runId)),
    () => timed(() => ctx.api.call('GET', `/api/v1/agents/${agentId}`)),
  );
  const sa = summarize(a);
  const sb = summarize(b);
  return {
    id: 'B5',
    what: 'status read: GET …/status ÷ a plain GET /agents/:id',
    stepwise: `p50 ${ms(sa.p50)}`,
    bare: `p50 ${ms(sb.p50)}`,
    ratio: sa.p50 / sb.p50,
    target: '≤ 2×',
    pass: sa.p50 / sb.p50 <= 2,
    detail: { status: sa, agent: sb },
  };
}

async function cannon(url: string, headers: Record<string, string>, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections: 50, duration: seconds, headers });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

export async function b7Reads(ctx: BenchContext): Promise<Row> {
  const auth = { Authorization: `Bearer ${ctx.stack.apiKey}` };
  // Both servers warmed first (JIT, connection pools), so that neither arm's first sample is a cold start.
  await cannon(`${ctx.stack.apiUrl}/api/v1/agents`, auth, 2);
  await cannon(ctx.stack.bareKoaUrl, {}, 2);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < 4 * ctx.scale; i++) {
    if (i % 2 === 0) {
      a.push(await cannon(`${ctx.stack.apiUrl}/api/v1/agents`, auth, 4));
      b.push(await cannon(ctx.stack.bareKoaUrl, {}, 4));
    } else {
      b.push(await cannon(ctx.stack.bareKoaUrl, {}, 4));
      a.push(await cannon(`${ctx.stack.apiUrl}/api/v1/agents`, auth, 4));
    }
  }
  const ra = summarize(a).p50;
  const rb = summarize(b).p50;
  return {
    id: 'B7',
    what: 'API reads: GET /api/v1/agents req/s at 50 connections ÷ bare Koa handler, same MongoDB query',
    stepwise: `${round(ra, 0)} req/s`,
    bare: `${round(rb, 0)} req/s`,
    ratio: ra / rb,
    target: '≥ 0.8×',
    pass: ra / rb >= 0.8,
    detail: { stepwise: a, bare: b },
  };
}
