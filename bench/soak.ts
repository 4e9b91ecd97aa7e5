/**
 * `npm run bench:soak [-- --minutes N]` (default 10): the memory soak of docs/benchmarks.md. A B3-style closed loop
 * of 3-step transform runs, 10 in flight, while the API's and the worker's RSS (and the API's heap in use) are sampled every 5 s;
 * the least-squares slope over the second half (after warm-up) is reported in MiB/min, and the floor of each minute
 * (what garbage collection leaves), where a leak shows as a rise that does not stop. Then the memory an open event
 * stream costs the API: K streams of one run waiting at an approval, (RSS with them − RSS before) / K.
 * Prints a summary and writes bench/results/soak-<time>.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startHttpSink } from '../test/helpers/http-sink';
import { readSse, type SseResult } from '../test/helpers/sse';
import { createContext, type BenchContext } from './arms';
import { rssMiB, startBenchStack } from './stack';
import { round, slope } from './stats';

const CONCURRENCY = 10;
const SAMPLE_EVERY_MS = 5_000;
const STREAMS = 50;

interface Sample {
  /** Seconds since the loop began. */
  t: number;
  apiMiB: number;
  workerMiB: number;
  /** The API's V8 heap in use (its /metrics), which shows a leak without the allocator's and GC's slack in RSS. */
  apiHeapMiB: number;
  runs: number;
}

async function apiHeapMiB(ctx: BenchContext): Promise<number> {
  const text = await fetch(`${ctx.stack.apiUrl}/metrics`).then((r) => r.text());
  const used = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
  return used === undefined ? NaN : Number(used) / 2 ** 20;
}

/**
 * The lowest reading of each minute: what is left after the collections of that minute. RSS and heap saw-tooth with
 * garbage collection, so a slope through every sample says more about where the last collection fell than about
 * growth; a leak shows as floors that keep rising.
 */
function minuteFloors(samples: Sample[], pick: (s: Sample) => number): number[] {
  const floors: { min: number; n: number }[] = [];
  for (const s of samples) {
    const minute = (floors[Math.floor(s.t / 60)] ??= { min: Infinity, n: 0 });
    minute.min = Math.min(minute.min, pick(s));
    minute.n++;
  }
  // A minute with few samples (the last one, cut short) has not seen a collection: its floor would mislead.
  const full = (60_000 / SAMPLE_EVERY_MS) * 0.75;
  return floors.filter((f) => f.n >= full && Number.isFinite(f.min)).map((f) => round(f.min, 1));
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function soak(ctx: BenchContext, minutes: number) {
  const deadline = Date.now() + minutes * 60_000;
  const t0 = Date.now();
  let runs = 0;
  let failures = 0;
  const samples: Sample[] = [];
  const sample = async () => {
    const t = (Date.now() - t0) / 1000;
    const [apiMiB, workerMiB] = [rssMiB(ctx.stack.pids.api), rssMiB(ctx.stack.pids.worker)];
    samples.push({ t, apiMiB, workerMiB, apiHeapMiB: await apiHeapMiB(ctx).catch(() => NaN), runs });
  };
  await sample();
  const timer = setInterval(() => void sample(), SAMPLE_EVERY_MS);
  try {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < deadline) {
          try {
            await ctx.api.waitForCompletion(await ctx.api.startRun(ctx.workflows[3]!, { n: 1 }));
            runs++;
          } catch (err) {
            // A soak reports what went wrong rather than throwing away the minutes measured so far.
            failures++;
            process.stderr.write(`[soak] run failed: ${err instanceof Error ? err.message : String(err)}\n`);
          }
        }
      }),
    );
  } finally {
    clearInterval(timer);
  }
  await sample();
  samples.sort((a, b) => a.t - b.t);
  const seconds = (Date.now() - t0) / 1000;
  // The first half is warm-up (JIT, caches, heaps growing to their working size).
  const settled = samples.filter((s) => s.t >= seconds / 2);
  const perMinute = (pick: (s: Sample) => number) =>
    slope(
      settled.map((s) => s.t / 60),
      settled.map(pick),
    );
  return {
    minutes,
    runs,
    failures,
    runsPerSecond: runs / seconds,
    apiSlopeMiBPerMin: perMinute((s) => s.apiMiB),
    workerSlopeMiBPerMin: perMinute((s) => s.workerMiB),
    apiRssFloorsMiB: minuteFloors(samples, (s) => s.apiMiB),
    apiHeapFloorsMiB: minuteFloors(samples, (s) => s.apiHeapMiB),
    workerRssFloorsMiB: minuteFloors(samples, (s) => s.workerMiB),
    samples,
  };
}

/** Median RSS of the API over a few readings, after a pause for the work just done to settle. */
async function settledApiRss(ctx: BenchContext): Promise<number> {
  await sleep(2_000);
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(rssMiB(ctx.stack.pids.api));
    await sleep(200);
  }
  return readings.sort((a, b) => a - b)[2]!;
}

async function perStream(ctx: BenchContext) {
  const [transform, approval] = [
    await ctx.api.systemTemplateId('transform'),
    await ctx.api.systemTemplateId('approval'),
  ];
  const { data } = await ctx.api.call<{ id: string }>('POST', '/api/v1/workflows', {
    name: 'soak gated',
    steps: [
      { id: 'first', template_id: transform, config: { expression: '1' } },
      { id: 'gate', template_id: approval, config: { message: 'Go on?' } },
      { id: 'last', template_id: transform, config: { expression: '2' } },
    ],
  });
  const runId = await ctx.api.startRun(data.id, {});
  while ((await ctx.api.status(runId, 5)).status !== 'waiting');
  const before = await settledApiRss(ctx);
  let opened = 0;
  const url = `${ctx.stack.apiUrl}/api/v1/workflows/runs/${runId}/events`;
  const readers: Promise<SseResult>[] = Array.from({ length: STREAMS }, () =>
    readSse(url, {
      headers: { Authorization: `Bearer ${ctx.stack.apiKey}` },
      onOpen: () => opened++,
      timeoutMs: 120_000,
    }),
  );
  while (opened < STREAMS) await sleep(50);
  const withStreams = await settledApiRss(ctx);
  await ctx.api.call('POST', `/api/v1/workflows/runs/${runId}/approve`, { step_id: 'gate', approved: true });
  const results = await Promise.all(readers);
  const refused = results.filter((r) => r.status !== 200).length;
  if (refused > 0) throw new Error(`${refused} of ${STREAMS} event streams were refused`);
  const after = await settledApiRss(ctx);
  return {
    streams: STREAMS,
    beforeMiB: before,
    withStreamsMiB: withStreams,
    afterMiB: after,
    perStreamKiB: ((withStreams - before) * 1024) / STREAMS,
  };
}

async function main(): Promise<void> {
  const minutes = Number(arg('--minutes') ?? 10);
  if (!(minutes > 0)) throw new Error('--minutes takes a positive number');
  // The default per-user cap (20) would refuse most of the K streams.
  // The context builds B2/B3's workflow of http_request steps, which needs the sink and the egress allowance.
  const sink = await startHttpSink();
  const stack = await startBenchStack({
    extraEnv: { EVENTS_MAX_STREAMS_PER_USER: String(STREAMS * 2), HTTP_ALLOWED_HOSTS: sink.host },
  });
  let result;
  try {
    const ctx = await createContext(stack, 1, sink.url('/bench'));
    process.stderr.write(`[soak] ${minutes} min, ${CONCURRENCY} runs in flight…\n`);
    const loop = await soak(ctx, minutes);
    process.stderr.write(`[soak] ${STREAMS} event streams…\n`);
    const sse = await perStream(ctx);
    await ctx.temporal.connection.close();
    result = { at: new Date().toISOString(), loop, sse };
  } finally {
    await stack.stop();
    await sink.close();
  }
  const { loop, sse } = result;
  const last = loop.samples[loop.samples.length - 1]!;
  process.stdout.write(
    `soak ${loop.minutes} min: ${loop.runs} runs (${round(loop.runsPerSecond, 1)}/s, ${loop.failures} failed); ` +
      `RSS slope over the second half: API ${round(loop.apiSlopeMiBPerMin, 2)} MiB/min (now ${round(last.apiMiB, 0)} MiB), ` +
      `worker ${round(loop.workerSlopeMiBPerMin, 2)} MiB/min (now ${round(last.workerMiB, 0)} MiB)\n` +
      `floors by minute (MiB): API RSS ${loop.apiRssFloorsMiB.join(', ')}; API heap ${loop.apiHeapFloorsMiB.join(', ')}; ` +
      `worker RSS ${loop.workerRssFloorsMiB.join(', ')}\n` +
      `event streams: ${sse.streams} open add ${round(sse.withStreamsMiB - sse.beforeMiB, 1)} MiB to the API's RSS ` +
      `(${round(sse.perStreamKiB, 0)} KiB per stream; ${round(sse.beforeMiB, 0)} → ${round(sse.withStreamsMiB, 0)} MiB, ` +
      `${round(sse.afterMiB, 0)} MiB once they ended)\n`,
  );
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(result, null, 2));
  process.stdout.write(`results: ${path.relative(process.cwd(), file)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
