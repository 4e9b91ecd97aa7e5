/**
 * `callTool`: one activity per tool call the model asked for. Only the step's own tools run; arguments are checked
 * against the tool's zod schema first. Problems the model can fix (unknown tool, malformed or invalid arguments, a
 * tool refusing its input) are written back as an error result — the model sees them on its next turn, which costs
 * it a turn. Transient failures are retried by Temporal; after the last attempt they too are handed to the model.
 * The result is truncated to a limit and always travels as data (JSON), never as instructions.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { z } from 'zod';
import { recordEgressDenied } from '../../../db/step-states';
import { getTranscriptEntry } from '../../../db/transcripts';
import { DEFAULT_EGRESS } from '../../../domain/egress';
import type { JsonValue } from '../../../domain/json';
import { classify, StepError } from '../../failures';
import type { ExpressionEvaluator } from '../../expressions/evaluator';
import type { Mailer } from '../../mail/mailer';
import { getTool } from '../../tools/registry';
import { inSpan } from '../../../shared/tracing';
import { heartbeating, type AgentActivityDeps } from './call-model';
import { recordedToolCall, writeToolResult } from './recorded-call';
import { replayAnswer, replayOrigin } from './replayed-call';
import type { CallToolInput, CallToolResult } from './types';

/** Tool output handed back to the model is cut at this many bytes of JSON (the rest would only cost tokens). */
export const TOOL_OUTPUT_LIMIT_BYTES = 16 * 1024;

export interface CallToolDeps extends AgentActivityDeps {
  mailer: Mailer;
  expressions: ExpressionEvaluator;
}

interface ToolOutcome {
  output: JsonValue;
  is_error: boolean;
  error_code?: string;
  /** Set when the step's egress policy refused the call: what was refused. */
  denied_target?: string;
}

/** An error result for the model: its message, and the failure code when there is one. */
export function errorResult(message: string, code?: string): ToolOutcome {
  return { output: code ? { error: message, code } : { error: message }, is_error: true, error_code: code };
}

/** Cuts `output` to TOOL_OUTPUT_LIMIT_BYTES of JSON (built-in and MCP tools alike). */
export function truncate(output: JsonValue): { output: JsonValue; truncated: boolean } {
  const json = JSON.stringify(output ?? null);
  if (Buffer.byteLength(json, 'utf8') <= TOOL_OUTPUT_LIMIT_BYTES) return { output, truncated: false };
  // Cut on a character boundary, then report it as a string preview with the original size.
  let preview = json.slice(0, TOOL_OUTPUT_LIMIT_BYTES);
  while (Buffer.byteLength(preview, 'utf8') > TOOL_OUTPUT_LIMIT_BYTES) preview = preview.slice(0, -1);
  return { output: { truncated: true, original_bytes: Buffer.byteLength(json, 'utf8'), preview }, truncated: true };
}

export function createCallToolActivity(deps: CallToolDeps) {
  return async function callTool(req: CallToolInput): Promise<CallToolResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const [setup, call, origin] = await Promise.all([
      getTranscriptEntry(deps.db, req.run_id, req.step_id, 0),
      recordedToolCall(deps.db, req),
      replayOrigin(deps.db, req.run_id),
    ]);
    if (setup?.kind !== 'setup') {
      throw ApplicationFailure.nonRetryable(
        `tool call ${req.assistant_seq}/${req.call_index} is not in the transcript`,
        'internal',
      );
    }

    // A replayed experiment item: a call its record holds is answered from it, and nothing runs.
    if (origin && setup.tools.includes(call.name)) {
      const replayed = await replayAnswer(deps.db, origin, req, call);
      if (replayed.kind === 'recorded') {
        await writeToolResult(deps.db, req, attempt, call, replayed.result);
        return { ok: !replayed.result.is_error, truncated: replayed.result.truncated };
      }
    }

    const run = async (): Promise<ToolOutcome> => {
      const tool = getTool(call.name);
      if (!setup.tools.includes(call.name) || !tool) {
        const allowed = setup.tools.length ? setup.tools.join(', ') : 'none';
        return errorResult(`tool "${call.name}" is not available in this step (available: ${allowed})`);
      }
      if (call.invalid_args !== undefined) {
        return errorResult(`the arguments are not valid JSON: ${call.invalid_args.slice(0, 200)}`);
      }
      const parsed = tool.input.safeParse(call.args);
      if (!parsed.success) return errorResult(`invalid arguments: ${z.prettifyError(parsed.error)}`);
      try {
        const execute = () =>
          tool.execute(parsed.data, {
            config: deps.config,
            mailer: deps.mailer,
            expressions: deps.expressions,
            // The seq makes the key unique even when a provider reuses call ids across turns; it is stable across retries.
            idempotencyKey: `${req.run_id}:${req.step_id}:${req.seq}:${call.id}`,
            // Transcripts written before egress policies existed carry none: they get the (deny-e-mail) defaults.
            egress: setup.egress ?? DEFAULT_EGRESS,
            signal: ctx.cancellationSignal,
          });
        const output = await heartbeating(() => inSpan(deps.tracer, `tool ${call.name}`, { tool: call.name }, execute));
        return { output: (output ?? null) as JsonValue, is_error: false };
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        const c = classify(err);
        if (c.code === 'egress_denied') {
          const target = err instanceof StepError && typeof err.details?.target === 'string' ? err.details.target : '';
          return { ...errorResult(`${call.name} refused: ${c.message}`, c.code), denied_target: target };
        }
        // Retry transient failures within the step's attempts; the model hears about the rest (and the last one).
        if (c.retryable && attempt < req.max_attempts) {
          throw ApplicationFailure.create({ message: c.message, type: c.code, nextRetryDelay: c.retryAfterMs });
        }
        return { ...errorResult(`${call.name} failed: ${c.message}`), error_code: c.code };
      }
    };

    const outcome = await run();
    deps.metrics.toolCall(
      call.name,
      outcome.denied_target !== undefined ? 'denied' : outcome.is_error ? 'error' : 'ok',
    );
    if (outcome.error_code === 'url_refused') deps.metrics.ssrfRefusal('tool');
    const { output, truncated } = truncate(outcome.output);
    await writeToolResult(deps.db, req, attempt, call, {
      output,
      is_error: outcome.is_error,
      error_code: outcome.error_code,
      truncated,
    });
    if (outcome.denied_target !== undefined) {
      // After the transcript write, so the status never names an attempt the transcript does not show.
      await recordEgressDenied(deps.db, req.run_id, req.step_id, {
        seq: req.seq,
        tool: call.name,
        target: outcome.denied_target,
      });
      deps.logger.info({ run_id: req.run_id, step_id: req.step_id, tool: call.name }, 'egress denied');
    }
    deps.logger.debug(
      { run_id: req.run_id, step_id: req.step_id, tool: call.name, ok: !outcome.is_error },
      'tool call done',
    );
    return { ok: !outcome.is_error, truncated };
  };
}
