/**
 * B6: the cost of running agent steps durably. A mock OpenAI-compatible server answers every call after a fixed
 * 300 ms; arm A runs a workflow of three agent steps through the API (start + status), arm B makes the same three
 * model calls as activities of a bare Temporal workflow (the floor of any design that keeps each call its own
 * activity): Stepwise ÷ that arm is the row. A third arm makes the calls inline through the same provider adapter,
 * reported beside it: Temporal alone costs some 1.06–1.09× of it, so it has no target.
 */
import { startLlmServer, type LlmServer } from '../test/helpers/llm-server';
import { createLlmProvider } from '../temporal/llm/provider';
import type { BenchContext, Row } from './arms';
import { interleaveArms, round, summarize, timed } from './stats';

export const MOCK_LLM_LATENCY_MS = 300;
/** The mock provider's model: every call answers after MOCK_LLM_LATENCY_MS. */
export const MOCK_LLM_MODEL = 'bench-300ms';
/** The mock provider's fast model (T2): every call answers at once, with MOCK_LLM_FAST_REPLY. */
export const MOCK_LLM_FAST_MODEL = 'bench-0ms';
/** The fast model's answer: a reply of a realistic size (2 KiB), also when it writes a thread's summary. */
export const MOCK_LLM_FAST_REPLY = 'The answer, at some length. '.repeat(74).slice(0, 2048);
const BENCH_KEY = 'sk-bench-not-a-secret';
/** The mock provider's env for a provider made in the bench process (T1's inline arm). */
export const mockLlmEnv = (llm: LlmServer) => ({ OPENAI_API_KEY: BENCH_KEY, OPENAI_BASE_URL: llm.baseUrl });

/** Starts the mock provider; its env goes to the API and the worker. */
export async function startMockLlm(): Promise<{ server: LlmServer; env: NodeJS.ProcessEnv }> {
  const server = await startLlmServer();
  const later = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  server.script(MOCK_LLM_MODEL, () => ({ hold: later(MOCK_LLM_LATENCY_MS).then(() => ({ text: 'done' })) }));
  server.script(MOCK_LLM_FAST_MODEL, () => ({ text: MOCK_LLM_FAST_REPLY }));
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
  // The reference: the same calls as bare Temporal activities pay Temporal's own dispatch and workflow tasks.
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
  const ratio = sa.p50 / sc.p50;
  return {
    id: 'B6',
    what: `agent-step overhead: 3 agent steps vs a mock LLM with fixed ${MOCK_LLM_LATENCY_MS} ms latency ÷ the same 3 calls as bare Temporal activities; inline calls beside it`,
    stepwise: `p50 ${round(sa.p50, 0)} ms`,
    bare: `p50 ${round(sc.p50, 0)} ms as bare Temporal activities; inline ${round(sb.p50, 0)} ms (Stepwise ÷ inline: ${round(sa.p50 / sb.p50, 2)}×)`,
    ratio,
    target: '≤ 1.07×',
    pass: ratio <= 1.07,
    detail: { stepwise: sa, bareTemporal: sc, inline: sb, stepwiseOverInline: sa.p50 / sb.p50 },
  };
}
