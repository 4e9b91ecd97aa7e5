/**
 * B6: the cost of running agent steps durably. A mock OpenAI-compatible server answers every call after a fixed
 * 300 ms; arm A runs a workflow of three agent steps through the API (start + status), arm B makes the same three
 * model calls inline through the same provider adapter. The ratio is the engine's overhead on LLM-bound work. A third
 * arm makes the same calls as activities of a bare Temporal workflow: what Temporal alone costs on this server; Stepwise
 * ÷ that arm is Stepwise's own cost, the row's second target.
 */
import { startLlmServer, type LlmServer } from '../test/helpers/llm-server';
import { createLlmProvider } from '../worker/llm/provider';
import type { BenchContext, Row } from './arms';
import { interleaveArms, round, summarize, timed } from './stats';

export const MOCK_LLM_LATENCY_MS = 300;
/** The mock provider's model: every call answers after MOCK_LLM_LATENCY_MS. */
export const MOCK_LLM_MODEL = 'bench-300ms';
const BENCH_KEY = 'sk-bench-not-a-secret';

/** Starts the mock provider; its env goes to the API and the worker. */
export async function startMockLlm(): Promise<{ server: LlmServer; env: NodeJS.ProcessEnv }> {
  const server = await startLlmServer();
  const later = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  server.script(MOCK_LLM_MODEL, () => ({ hold: later(MOCK_LLM_LATENCY_MS).then(() => ({ text: 'done' })) }));
  return { server, env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: BENCH_KEY } };
}

export async function b6AgentOverhead(ctx: BenchContext, llm: LlmServer): Promise<Row> {
  const template = await ctx.api.call<{ id: string }>('POST', '/api/v1/agents', {
    name: 'bench agent',
    default_prompt: 'Answer briefly.',
    model: `openai:${MOCK_LLM_MODEL}`,
  });
  const steps = ['a1', 'a2', 'a3'].map((id) => ({ id, template_id: template.data.id, input: { question: 'go' } }));
  const workflow = await ctx.api.call<{ id: string }>('POST', '/api/v1/workflows', { name: 'bench agents', steps });
  const provider = createLlmProvider(
    { OPENAI_API_KEY: BENCH_KEY, OPENAI_BASE_URL: llm.baseUrl },
    `openai:${MOCK_LLM_MODEL}`,
  );
  const inline = async () => {
    for (let i = 0; i < 3; i++) {
      await provider.generate({ system: 'Answer briefly.', messages: [{ role: 'user', text: 'go' }], tools: [] });
    }
  };
  // The second target's arm: the same calls as bare Temporal activities pay Temporal's own dispatch and workflow tasks.
  let seq = 0;
  const bareTemporal = async (): Promise<void> => {
    const handle = await ctx.temporal.workflow.start('bareAgentWorkflow', {
      taskQueue: ctx.stack.bareQueue,
      workflowId: `bare-agent-${process.pid}-${++seq}`,
      args: [3, llm.baseUrl, `openai:${MOCK_LLM_MODEL}`, BENCH_KEY],
    });
    await handle.result();
  };
  const [a, b, c] = await interleaveArms(
    10 * ctx.scale,
    [
      () => timed(async () => ctx.api.waitForCompletion(await ctx.api.startRun(workflow.data.id, {}))),
      () => timed(inline),
      () => timed(bareTemporal),
    ],
    2,
  );
  const sa = summarize(a!);
  const sb = summarize(b!);
  const sc = summarize(c!);
  return {
    id: 'B6',
    what: `agent-step overhead: 3 agent steps vs a mock LLM with fixed ${MOCK_LLM_LATENCY_MS} ms latency ÷ the same 3 calls inline`,
    stepwise: `p50 ${round(sa.p50, 0)} ms`,
    bare: `p50 ${round(sb.p50, 0)} ms inline; as bare Temporal activities ${round(sc.p50, 0)} ms (Stepwise ÷ them: ${round(sa.p50 / sc.p50, 2)}×)`,
    ratio: sa.p50 / sb.p50,
    target: '≤ 1.12× inline; ≤ 1.05× bare activities',
    pass: sa.p50 / sb.p50 <= 1.12 && sa.p50 / sc.p50 <= 1.05,
    detail: { stepwise: sa, inline: sb, bareTemporal: sc, stepwiseOverBareTemporal: sa.p50 / sc.p50 },
  };
}
