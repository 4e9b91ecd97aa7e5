/**
 * The second part of a model call: the call itself, with SDK retries off (Temporal's retry policy is the only retry
 * layer). The answer's text goes to the run's event stream as it is generated (./live-text.ts); a call that fails
 * voids what it streamed, and a call that answers hands back the rest of its text as events for the turn's write.
 */
import { ApplicationFailure, type Context } from '@temporalio/activity';
import type { Tracer } from '@opentelemetry/api';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import type { Config } from '../../../config';
import type { NewRunEvent } from '../../../db/run-events';
import { toLlmMessages } from '../../../db/transcripts';
import type { JsonObject } from '../../../domain/json';
import type { McpToolDefinition } from '../../../domain/mcp';
import { UPDATE_MEMORY_DESCRIPTION, UPDATE_MEMORY_PARAMETERS, UPDATE_MEMORY_TOOL } from '../../../domain/thread-memory';
import { inSpan } from '../../../shared/tracing';
import { createLlmProvider } from '../../llm/provider';
import type { GenerateResult, LlmToolSpec } from '../../llm/types';
import type { WorkerMetrics } from '../../metrics';
import { getTool, toolParametersSchema } from '../../tools/registry';
import type { Conversation } from './conversation';
import { openLiveText } from './live-text';
import type { CallModelInput } from './types';

export interface ModelCallDeps {
  config: Config;
  db: Db;
  metrics: WorkerMetrics;
  tracer?: Tracer;
}

/** The provider's answer, and the rest of its live text (events for the turn's write; never rejects). */
export interface ModelAnswer {
  result: GenerateResult;
  liveTail: Promise<NewRunEvent[]>;
}

/** Calls the model with the conversation; throws the provider's failure (after voiding the text it streamed). */
export async function callTheModel(
  deps: ModelCallDeps,
  req: CallModelInput,
  at: { attempt: number; log: Logger; ctx: Context },
  conversation: Conversation,
): Promise<ModelAnswer> {
  const { setup, history, context } = conversation;
  const provider = createLlmProvider(deps.config, setup.model, { timeoutMs: req.timeout_ms });
  const ref = provider.ref;
  const liveText = openLiveText(
    { db: deps.db, log: at.log, retentionMs: deps.config.STREAM_DELTAS_RETENTION_HOURS * 3_600_000 },
    { runId: req.run_id, execId: req.step_id, turn: req.turn, attempt: at.attempt },
  );
  const started = performance.now();
  const generate = () =>
    provider.generate({
      system: conversation.threadSystem ? `${setup.system}\n\n${conversation.threadSystem}` : setup.system,
      messages: toLlmMessages(context.length > 0 ? [...context, ...history] : history),
      tools: [
        ...toolSpecs(setup.tools),
        ...mcpToolSpecs(setup.mcp_tools),
        ...(conversation.memoryTool ? [MEMORY_TOOL] : []),
      ],
      temperature: setup.temperature,
      maxOutputTokens: setup.max_output_tokens,
      signal: at.ctx.cancellationSignal,
      onText: (text) => liveText.push(text),
    });
  const spanAttributes = { 'gen_ai.system': ref.provider, 'gen_ai.request.model': ref.name, turn: req.turn };
  const result = await inSpan(deps.tracer, `model ${ref.provider}:${ref.name}`, spanAttributes, generate).catch(
    async (err: unknown) => {
      deps.metrics.modelCall(ref.provider, ref.name, false, (performance.now() - started) / 1000);
      await liveText.abandon();
      throw err;
    },
  );
  deps.metrics.modelCall(ref.provider, ref.name, true, (performance.now() - started) / 1000, result.usage);
  if (result.warnings.length > 0) at.log.info({ warnings: result.warnings }, 'model call warnings');
  return { result, liveTail: liveText.finish() };
}

/** A thread's working-memory tool (decision 0601), run by the agent loop as the thread's own. */
const MEMORY_TOOL: LlmToolSpec = {
  name: UPDATE_MEMORY_TOOL,
  description: UPDATE_MEMORY_DESCRIPTION,
  parameters: UPDATE_MEMORY_PARAMETERS,
};

function toolSpecs(names: string[]): LlmToolSpec[] {
  return names.map((name) => {
    const tool = getTool(name);
    if (!tool) throw ApplicationFailure.nonRetryable(`tool "${name}" does not exist`, 'invalid_config');
    return { name: tool.name, description: tool.description, parameters: toolParametersSchema(tool) as JsonObject };
  });
}

/** MCP tools as listed for the step (their schemas are the servers' own). */
function mcpToolSpecs(tools: readonly McpToolDefinition[] | undefined): LlmToolSpec[] {
  return (tools ?? []).map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema }));
}
