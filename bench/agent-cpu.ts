/**
 * `npx tsx bench/agent-cpu.ts [runs]`: the worker's CPU per realistic agent run. Runs of three agent steps against the mock
 * model (300 ms per call, as in B6), 10 in flight, after a warm-up; prints the worker process's CPU-ms (main thread
 * and workflow threads, from /proc) per completed run. One number per stack: to compare two builds of the worker, run
 * it against each, alternately, several times (docs/benchmarks.md, "Tuning notes", records the figures).
 */
import { ApiClient } from './api-client';
import { startMockLlm } from './agent-overhead';
import { cpuMs, rssMiB, startBenchStack } from './stack';
import { round } from './stats';

const RUNS = Number(process.argv[2] ?? 100);
const IN_FLIGHT = 10;
const WARMUP = 10;

async function runAll(count: number, once: () => Promise<unknown>): Promise<void> {
  let left = count;
  const lane = async (): Promise<void> => {
    while (left > 0) {
      left--;
      await once();
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count) }, lane));
}

async function main(): Promise<void> {
  const llm = await startMockLlm();
  const stack = await startBenchStack({ extraEnv: llm.env });
  try {
    const api = new ApiClient(stack.apiUrl, stack.apiKey);
    const template = await api.call<{ id: string }>('POST', '/api/v1/agents', {
      name: 'bench agent',
      default_prompt: 'Answer briefly.',
      model: 'openai:bench-300ms',
    });
    const steps = ['a1', 'a2', 'a3'].map((id) => ({ id, template_id: template.data.id, input: { question: 'go' } }));
    const workflow = await api.call<{ id: string }>('POST', '/api/v1/workflows', { name: 'bench agents', steps });
    const once = async () => api.waitForCompletion(await api.startRun(workflow.data.id, {}));
    await runAll(WARMUP, once);
    const cpu0 = cpuMs(stack.pids.worker);
    await runAll(RUNS, once);
    const perRun = (cpuMs(stack.pids.worker) - cpu0) / RUNS;
    process.stdout.write(
      `worker CPU per 3-agent-step run: ${round(perRun, 1)} CPU-ms (${RUNS} runs, ${IN_FLIGHT} in flight), ` +
        `RSS ${round(rssMiB(stack.pids.worker), 0)} MiB\n`,
    );
    api.close();
  } finally {
    await stack.stop();
    await llm.server.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`agent-cpu failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
