/**
 * The agent loop's MCP activities (docs/mcp.md):
 * - `listMcpTools`: once per agent execution, before its first model call; the list it returns is what the model is
 *   shown for the whole step (the workflow passes it on, so a replay sees the same list).
 * - `callMcpTool`: one per call of an MCP tool. Tools annotated read-only or idempotent are retried like any activity;
 *   any other is attempted once (the workflow gives it one attempt), and whatever goes wrong comes back to the model
 *   as an error result — never a second call. A destructive tool's call comes with the owner's decision
 *   (./mcp-approval.ts): approved, it is made; declined, the model hears so and the server is not contacted.
 * - `recordMcpToolFailure`: when a callMcpTool activity failed for good (timed out, its worker died), the workflow has
 *   this write the call's error result, so the model hears of it and the call is not repeated.
 * Each opens its own MCP session (temporal/mcp/server-session.ts): Streamable HTTP with credentials read from MongoDB,
 * or a stdio server process the operator declared, launched for the one activity.
 */
import type { Span } from '@opentelemetry/api';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { markAgentResumed } from '../../../db/step-waits';
import { putApprovalDecided } from '../../../db/thread-approvals';
import type { JsonValue } from '../../../domain/json';
import { needsApproval, type McpToolDefinition, type McpToolList } from '../../../domain/mcp';
import { classifyMcpError } from '../../mcp/errors';
import { withServerSession } from '../../mcp/server-session';
import { assertStdioToolAllowed, stdioDeclaration } from '../../mcp/stdio-session';
import { selectTools } from '../../mcp/tool-list';
import { inSpan } from '../../../shared/tracing';
import { heartbeating, type AgentActivityDeps } from './call-model';
import { errorResult, truncate } from './call-tool';
import { recordedToolCall, writeToolResult } from './recorded-call';
import { replayAnswer, replayOrigin } from './replayed-call';
import type {
  CallMcpToolInput,
  CallToolResult as LoopToolResult,
  ListMcpToolsInput,
  RecordMcpFailureInput,
} from './types';

/** A recorded failure outranks any attempt of the failed activity (a late zombie cannot overwrite it). */
const RECORDED_FAILURE_ATTEMPT = 1_000_000;

/**
 * The W3C trace context of the call's span (none with tracing off), for the request's `_meta`: the server can join
 * its own spans to the run's trace.
 */
function traceMeta(span: Span | undefined): Record<string, string> {
  if (!span) return {};
  const c = span.spanContext();
  return { traceparent: `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 1).toString(16).padStart(2, '0')}` };
}

/** A tool result as data for the model: text stays text, binary content is described, never inlined. */
function resultOutput(result: CallToolResult): JsonValue {
  const content = (result.content ?? []).map((item): JsonValue => {
    switch (item.type) {
      case 'text':
        return { type: 'text', text: item.text };
      case 'image':
      case 'audio':
        return { type: item.type, mime_type: item.mimeType, base64_chars: item.data.length };
      case 'resource_link':
        return { type: 'resource_link', uri: item.uri, name: item.name };
      case 'resource':
        return {
          type: 'resource',
          uri: item.resource.uri,
          ...('text' in item.resource ? { text: item.resource.text } : { base64_chars: item.resource.blob.length }),
        };
      default:
        return { type: 'unknown' };
    }
  });
  return {
    content,
    ...(result.structuredContent !== undefined ? { structured_content: result.structuredContent as JsonValue } : {}),
  };
}

export function createMcpToolActivities(deps: AgentActivityDeps) {
  async function listMcpTools(req: ListMcpToolsInput): Promise<McpToolList> {
    const ctx = Context.current();
    const tools: McpToolDefinition[] = [];
    const problems: string[] = [];
    for (const server of req.servers) {
      let selection = server;
      try {
        if (server.stdio !== undefined) {
          // The operator's limit as this worker has it now, whatever the API saw when the run started.
          const decl = stdioDeclaration(deps.config.MCP_STDIO_SERVERS, server.stdio);
          selection = { ...server, allowed_tools: decl.allowed_tools ?? null };
        }
        const listed = await heartbeating(() =>
          withServerSession(deps, req, server, async (client) => {
            const all = [];
            let cursor: string | undefined;
            // A few pages at most: a server listing more than this is cut (the bound below applies anyway).
            for (let page = 0; page < 10; page++) {
              const answer = await client.listTools(cursor ? { cursor } : {}, { timeout: req.timeout_ms });
              all.push(...answer.tools);
              cursor = answer.nextCursor;
              if (!cursor) break;
            }
            return all;
          }),
        );
        problems.push(...selectTools(selection, listed, tools));
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        const c = classifyMcpError(err);
        if (c.retryable && ctx.info.attempt < req.max_attempts) {
          throw ApplicationFailure.create({ message: `MCP server ${server.server_name}: ${c.message}`, type: c.code });
        }
        deps.metrics.mcpCall('list_tools', c.code === 'egress_denied' ? 'denied' : 'error');
        problems.push(`MCP server ${server.server_name}: its tools could not be listed (${c.message})`);
        continue;
      }
      deps.metrics.mcpCall('list_tools', 'ok');
    }
    if (problems.length > 0) {
      deps.logger.info({ run_id: req.run_id, step_id: req.step_id, problems }, 'MCP tools left out');
    }
    return { tools, problems };
  }

  async function callMcpTool(req: CallMcpToolInput): Promise<LoopToolResult> {
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const [call, origin] = await Promise.all([recordedToolCall(deps.db, req), replayOrigin(deps.db, req.run_id)]);
    // A replayed experiment item: a call its record holds is answered from it (no server is reached).
    const replayed = await replayAnswer(deps.db, origin, req, call);
    if (replayed.kind === 'recorded') {
      await writeToolResult(deps.db, req, attempt, call, replayed.result);
      return { ok: !replayed.result.is_error, truncated: replayed.result.truncated };
    }
    const run = async (): Promise<{ output: JsonValue; is_error: boolean; error_code?: string }> => {
      if (needsApproval(req.tool)) {
        // The call waited for the owner (./mcp-approval.ts): the step goes on, whatever the answer.
        if (req.decision) {
          const waited = { transcript_seq: req.assistant_seq, index: req.call_index, name: call.name };
          // A thread turn's conversation first (db/thread-approvals.ts): a reader woken by `step.resumed` finds it.
          await putApprovalDecided(deps.db, req, req.decision, new Date());
          await markAgentResumed(deps.db, req.run_id, req.step_id, waited, req.decision.approved);
        }
        if (!req.decision?.approved) {
          const comment = req.decision?.comment ? `: ${req.decision.comment}` : '';
          const message = req.decision
            ? `the user declined this call of ${call.name}${comment}; it was not made`
            : `${call.name} is marked destructive and was not approved; it was not made`;
          // The code is for the metrics and the transcript; the model is told in words only.
          return { ...errorResult(message), error_code: 'declined' };
        }
      }
      if (call.invalid_args !== undefined) {
        return errorResult(`the arguments are not valid JSON: ${call.invalid_args.slice(0, 200)}`);
      }
      const args = call.args ?? {};
      if (typeof args !== 'object' || Array.isArray(args)) {
        return errorResult('the arguments must be a JSON object');
      }
      try {
        // A tool the operator has since taken out of a stdio server's allowed_tools is not called (no process starts).
        if (req.stdio !== undefined) assertStdioToolAllowed(deps.config.MCP_STDIO_SERVERS, req.stdio, req.tool.tool);
        const attributes = {
          'mcp.method.name': 'tools/call',
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': req.tool.tool,
        };
        const result = await inSpan(deps.tracer, `tools/call ${req.tool.tool}`, attributes, (span) => {
          const meta = traceMeta(span);
          return heartbeating(() =>
            withServerSession(
              deps,
              req,
              { server_id: req.tool.server_id, url: req.url, ...(req.stdio !== undefined ? { stdio: req.stdio } : {}) },
              (client) =>
                client.callTool({ name: req.tool.tool, arguments: args, _meta: meta }, undefined, {
                  timeout: req.timeout_ms,
                }) as Promise<CallToolResult>,
            ),
          );
        });
        return { output: resultOutput(result), is_error: result.isError === true };
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        const c = classifyMcpError(err);
        // Only a tool that declares itself safe to repeat is tried again; any other hears of its one attempt.
        if (req.tool.retry === 'retry' && c.retryable && attempt < req.max_attempts) {
          throw ApplicationFailure.create({ message: c.message, type: c.code });
        }
        const unsure =
          req.tool.retry === 'once' && c.retryable ? ' (it may or may not have taken effect; not repeated)' : '';
        return errorResult(`${call.name} failed: ${c.message}${unsure}`, c.code);
      }
    };
    const outcome = await run();
    deps.metrics.mcpCall(
      'call_tool',
      outcome.error_code === 'egress_denied' || outcome.error_code === 'url_refused'
        ? 'denied'
        : outcome.error_code === 'declined'
          ? 'refused'
          : outcome.is_error
            ? 'error'
            : 'ok',
    );
    const { output, truncated } = truncate(outcome.output);
    await writeToolResult(deps.db, req, attempt, call, {
      output,
      is_error: outcome.is_error,
      error_code: outcome.error_code,
      truncated,
    });
    return { ok: !outcome.is_error, truncated };
  }

  async function recordMcpToolFailure(req: RecordMcpFailureInput): Promise<LoopToolResult> {
    const call = await recordedToolCall(deps.db, req);
    deps.metrics.mcpCall('call_tool', 'error');
    await writeToolResult(deps.db, req, RECORDED_FAILURE_ATTEMPT, call, {
      output: {
        error: `${call.name} did not answer: ${req.message} (it may or may not have taken effect; not repeated)`,
        code: 'timeout',
      },
      is_error: true,
      error_code: 'timeout',
      truncated: false,
    });
    return { ok: false, truncated: false };
  }

  return { listMcpTools, callMcpTool, recordMcpToolFailure };
}
