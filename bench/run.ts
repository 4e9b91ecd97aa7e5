/**
 * `npm run bench`: the table of docs/benchmarks.md ("Rows and targets"), every figure a ratio of two arms measured
 * side by side in this run on this machine. Prints a table and writes bench/results/<time>.json.
 * Options: --only B1,C1   --scale 2 (more samples)   --profile <dir> (CPU profiles of the API and worker; summarise
 * them with `tsx bench/profile-summary.ts <dir>/api` — one
 * folder per process, the heaviest profile in it is the main thread)
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  b0Calibration,
  b1StartPath,
  b2EndToEnd,
  b3Saturation,
  b4PerStep,
  b5StatusRead,
  b7Reads,
  createContext,
  type BenchContext,
  type Row,
} from './arms';
import { startHttpSink, type HttpSink } from '../test/helpers/http-sink';
import { b6AgentOverhead, startMockLlm } from './agent-overhead';
import { c1RunStart, c2StepRoundTrips } from './counted';
import { b11Growth } from './growth';
import { b10FanOut } from './fan-out';
import { t1FirstToken, t2Growth, t3Concurrent } from './threads';
import { startBenchStack } from './stack';
import { round } from './stats';

type Bench = (
  ctx: BenchContext,
  extras: { llm: Awaited<ReturnType<typeof startMockLlm>>['server']; sink: HttpSink },
) => Promise<Row | Row[]>;

const BENCHES: Record<string, Bench> = {
  B0: b0Calibration,
  B1: b1StartPath,
  B2: b2EndToEnd,
  B3: b3Saturation,
  B4: b4PerStep,
  B5: b5StatusRead,
  B6: (ctx, { llm }) => b6AgentOverhead(ctx, llm),
  B7: b7Reads,
  B10: (ctx, { sink }) => b10FanOut(ctx, sink),
  // Counted, not timed (docs/benchmarks.md lists each round trip with its reason).
  C1: c1RunStart,
  C2: c2StepRoundTrips,
  // Threads (docs/threads.md): a turn against the call or run it stands for.
  T1: (ctx, { llm }) => t1FirstToken(ctx, llm),
  T2: t2Growth,
  T3: t3Concurrent,
  // Last: it fills the database with 100 000 runs.
  B11: b11Growth,
};

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const only = arg('--only')
    ?.split(',')
    .map((s) => s.trim().toUpperCase());
  const scale = Math.max(1, Number(arg('--scale') ?? 1));
  const llm = await startMockLlm();
  const sink = await startHttpSink();
  const profileDir = arg('--profile');
  const stack = await startBenchStack({
    extraEnv: { ...llm.env, HTTP_ALLOWED_HOSTS: sink.host },
    ...(profileDir ? { profileDir: path.resolve(profileDir) } : {}),
  });
  const rows: Row[] = [];
  try {
    const ctx = await createContext(stack, scale, sink.url('/bench'));
    for (const [id, bench] of Object.entries(BENCHES)) {
      if (only && !only.includes(id)) continue;
      process.stderr.write(`[bench] ${id}…\n`);
      const out = await bench(ctx, { llm: llm.server, sink });
      const got = Array.isArray(out) ? out : [out];
      // Each row as it lands: a later row's failure leaves the earlier ones on record.
      for (const r of got) process.stderr.write(`[bench] ${r.id}: ${r.stepwise} | ${r.bare} | ${round(r.ratio, 2)}×\n`);
      rows.push(...got);
    }
    ctx.api.close();
    await ctx.temporal.connection.close();
  } finally {
    await stack.stop();
    await llm.server.close();
    await sink.close();
  }
  const table = [
    ['id', 'stepwise', 'reference', 'ratio', 'target', 'ok'],
    ...rows.map((r) => [
      r.id,
      r.stepwise,
      r.bare,
      Number.isFinite(r.ratio) ? `${round(r.ratio, 2)}×` : '-',
      r.target,
      r.pass ? 'yes' : 'FAIL',
    ]),
  ];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  for (const r of table) process.stdout.write(`${r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')}\n`);
  for (const r of rows) process.stdout.write(`${r.id}: ${r.what}\n`);
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), scale, rows }, null, 2));
  process.stdout.write(`results: ${path.relative(process.cwd(), file)}\n`);
  const failed = rows.filter((r) => !r.pass).map((r) => r.id);
  if (failed.length > 0) {
    process.stdout.write(`FAIL: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
