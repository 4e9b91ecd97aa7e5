/**
 * The agent step: a durable loop in workflow code. Each model call is one activity (`callModel`) and each tool call
 * the model asks for is one activity (`callTool`), so a worker killed mid-loop resumes at the first incomplete call
 * and nothing completed is repeated — Temporal's history holds every completed call's (small) result, and the
 * transcript in MongoDB holds the messages. Model calls never retry on their own (SDK retries are off): the retry
 * policy below is the only retry layer.
 *
 * Turn rules: a turn is one model call; the loop ends with the first answer that has no tool calls. A model still
 * asking for tools on turn `max_turns` fails the step with reason `turn_limit` (its tools are not run). With an
 * `output_schema`, an answer that does not validate gets one extra repair turn; a second miss fails the step with
 * reason `invalid_output`.
 *
 * Budget: before each model call the run's budget (summed over all its steps, see ./budget.ts) must allow it and
 * the call is reserved — at the top-level run too for a sub-workflow's run (./budget-share.ts); a call that fails
 * gives its reservation back, and a call that pushes the run's tokens over the budget fails the step with reason
 * `budget_exceeded`.
 *
 * The commands issued here are what the replay tests hold (docs/decisions/0430-shipping-workflow-changes.md).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DEFAULT_MAX_TURNS, type AgentStepContext, type AgentStepOutcome } from '../../domain/agent';
import type { JsonValue } from '../../domain/json';
import { needsApproval, type McpToolList, type McpToolShown } from '../../domain/mcp';
import type { ApprovalDecision } from '../../domain/messages';
import type { AgentStepSnapshot, Usage } from '../../domain/run';
import { UPDATE_MEMORY_TOOL } from '../../domain/thread-memory';
import type { TokenUsage } from '../../domain/transcript';
import { callUsage } from '../../domain/usage';
import { budgetExceeded, releaseCall, reserveCall, settleCall, untilVerdict, verdictPending } from './budget';
import { addUsage } from './run-env';

/** ApplicationFailure types of the loop's own failures (the run's error reason). */
export const TURN_LIMIT_FAILURE_TYPE = 'turn_limit';
export const INVALID_OUTPUT_FAILURE_TYPE = 'invalid_output';

export async function runAgentStep(
  step: AgentStepSnapshot,
  input: JsonValue,
  ctx: AgentStepContext,
): Promise<AgentStepOutcome> {
  const timeoutSeconds = Math.max(step.timeout_seconds, 2);
  const activityOptions = {
    // What the Temporal Web UI shows for each model and tool call: the agent execution it belongs to.
    summary: `agent ${ctx.stepId}`,
    startToCloseTimeout: `${timeoutSeconds} seconds`,
    // Activities heartbeat every 2 s: a killed worker is noticed within this, not after the whole timeout.
    heartbeatTimeout: `${Math.min(timeoutSeconds, 10)} seconds`,
    retry: {
      maximumAttempts: step.retry.max_attempts,
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '60 seconds',
    },
  } satisfies ActivityOptions;
  const { callModel, callTool, compactThread, updateMemory } = proxyActivities<Activities>(activityOptions);
  const maxTurns = step.max_turns > 0 ? step.max_turns : DEFAULT_MAX_TURNS;
  const common = { run_id: ctx.runId, step_id: ctx.stepId, max_attempts: step.retry.max_attempts };
  // The provider's own HTTP timeout ends a little before the attempt does, so the failure is classified (timeout).
  const timeoutMs = Math.max(timeoutSeconds * 1000 - 1000, 1000);
  const usage: Usage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };
  let seq = 0;
  let repair: string | undefined;
  let repairsUsed = 0;
  // Only steps with MCP tools list them.
  const mcp = step.mcp_tools?.length
    ? await mcpTools(step, ctx, activityOptions, Math.min(timeoutMs, MCP_EXCHANGE_TIMEOUT_MS))
    : undefined;

  // A thread's turn first compacts the thread when its history outgrew the window (decision 0601): an activity that
  // calls the model only when needed, counted against the budget like a model call. Only thread steps schedule it.
  if (step.thread) {
    const thread = step.thread;
    await budgeted(
      ctx,
      usage,
      `${ctx.runId}/${ctx.stepId}/summary`,
      () =>
        compactThread({
          run_id: ctx.runId,
          step_id: ctx.stepId,
          owner_id: ctx.ownerId,
          model: step.model,
          thread,
          timeout_ms: timeoutMs,
        }),
      (compacted) => compacted.usage,
    );
  }

  for (let turn = 1; ; turn++) {
    // A refusal waits for the calls in flight (./budget.ts); each check after a wait is synchronous with the
    // reservation, so no other branch or item of the run can take the same call. Without a budget nothing waits
    // or is refused: the counts only grow.
    const result = await budgeted(
      ctx,
      usage,
      `${ctx.runId}/${ctx.stepId}/${turn}`,
      () =>
        callModel({
          ...common,
          owner_id: ctx.ownerId,
          timeout_ms: timeoutMs,
          turn,
          seq,
          repair,
          ...(step.thread ? { thread: step.thread } : {}),
          setup:
            turn === 1
              ? {
                  prompt: step.prompt,
                  tasks: step.tasks,
                  tools: step.tools,
                  model: step.model,
                  output_schema: step.output_schema ?? null,
                  max_turns: maxTurns,
                  ...(step.temperature !== undefined ? { temperature: step.temperature } : {}),
                  ...(step.max_output_tokens !== undefined ? { max_output_tokens: step.max_output_tokens } : {}),
                  ...(step.egress !== undefined ? { egress: step.egress } : {}),
                  ...(mcp ? { mcp_tools: mcp.list.tools, mcp_problems: mcp.list.problems } : {}),
                  input,
                }
              : undefined,
        }),
      (answered) => answered.usage,
    );
    seq = result.next_seq;
    repair = undefined;

    switch (result.kind) {
      case 'final':
        return { output: result.output, usage, turns: turn };
      case 'invalid_output':
        if (repairsUsed >= 1) {
          throw ApplicationFailure.nonRetryable(
            `the final answer still does not fit output_schema: ${result.problem}`,
            INVALID_OUTPUT_FAILURE_TYPE,
            {
              usage,
            },
          );
        }
        repairsUsed += 1;
        repair = result.problem;
        continue;
      case 'tool_calls': {
        if (turn >= maxTurns + repairsUsed) {
          throw ApplicationFailure.nonRetryable(
            `the model still asked for tools after ${turn} model calls (max_turns ${maxTurns})`,
            TURN_LIMIT_FAILURE_TYPE,
            { usage },
          );
        }
        const first = seq;
        // The calls of one turn run in parallel; each result has its seq fixed up front, so the order is deterministic.
        await Promise.all(
          result.calls.map((call, index) => {
            const at = { ...common, turn, assistant_seq: result.assistant_seq, call_index: index, seq: first + index };
            // A thread's own tool (decision 0601): the working memory, with the thread's id.
            if (step.thread && call.name === UPDATE_MEMORY_TOOL) return updateMemory({ ...at, thread: step.thread });
            const mcpTool = mcp?.list.tools.find((t) => t.name === call.name);
            return mcp && mcpTool ? mcp.call(mcpTool, at) : callTool(at);
          }),
        );
        seq = first + result.calls.length;
        continue;
      }
    }
  }
}

/** Time limit of one HTTP exchange with an MCP server (the activity's own timeout bounds the whole call). */
const MCP_EXCHANGE_TIMEOUT_MS = 60_000;

interface ToolCallAt {
  run_id: string;
  step_id: string;
  max_attempts: number;
  turn: number;
  assistant_seq: number;
  call_index: number;
  seq: number;
}

/**
 * Lists the step's MCP tools (one activity, before the first model call) and returns the list with the way to call
 * one: a tool annotated read-only or idempotent gets the step's attempts, any other exactly one (decision 0401). A
 * call whose activity fails for good (timeout, lost worker) is recorded as an error result for the model — never
 * tried again. A destructive tool's call first waits for the owner's decision in the approvals inbox (decision 0410):
 * the wait is workflow state, so a worker lost meanwhile changes nothing, and the call is made once, after approval.
 */
async function mcpTools(
  step: AgentStepSnapshot,
  ctx: AgentStepContext,
  options: ActivityOptions & { retry: NonNullable<ActivityOptions['retry']> },
  exchangeTimeoutMs: number,
): Promise<{ list: McpToolList; call: (tool: McpToolShown, at: ToolCallAt) => Promise<unknown> }> {
  const servers = step.mcp_tools ?? [];
  const retrying = proxyActivities<Activities>(options);
  const once = proxyActivities<Activities>({ ...options, retry: { ...options.retry, maximumAttempts: 1 } });
  const list = await retrying.listMcpTools({
    run_id: ctx.runId,
    step_id: ctx.stepId,
    owner_id: ctx.ownerId,
    servers,
    ...(step.egress !== undefined ? { egress: step.egress } : {}),
    timeout_ms: exchangeTimeoutMs,
    max_attempts: step.retry.max_attempts,
  });
  const call = async (tool: McpToolShown, at: ToolCallAt): Promise<unknown> => {
    const server = servers.find((s) => s.server_id === tool.server_id);
    if (!server) throw ApplicationFailure.nonRetryable(`MCP server ${tool.server_id} is not in the step`, 'internal');
    let decision: ApprovalDecision | undefined;
    if (needsApproval(tool) && ctx.awaitDecision) {
      decision = await ctx.awaitDecision(() =>
        retrying.requestMcpApproval({
          run_id: at.run_id,
          step_id: at.step_id,
          assistant_seq: at.assistant_seq,
          call_index: at.call_index,
          server_name: server.server_name,
          tool: tool.tool,
        }),
      );
    }
    // A declined call contacts no server: safe to retry whatever the tool is.
    const proxy = tool.retry === 'retry' || decision?.approved === false ? retrying : once;
    try {
      return await proxy.callMcpTool({
        ...at,
        owner_id: ctx.ownerId,
        url: server.url,
        // Only stdio selections carry it: the activity input of every other call is as before.
        ...(server.stdio !== undefined ? { stdio: server.stdio } : {}),
        tool,
        ...(step.egress !== undefined ? { egress: step.egress } : {}),
        timeout_ms: exchangeTimeoutMs,
        ...(decision ? { decision: { approved: decision.approved, by: decision.by, comment: decision.comment } } : {}),
      });
    } catch (err) {
      if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
      const why = err.cause?.message ?? err.message;
      return retrying.recordMcpToolFailure({ ...at, message: why });
    }
  };
  return { list, call };
}

/**
 * One model call under the run's budget (./budget.ts), the agent's and the compaction's alike: waits for a verdict
 * while one is pending, reserves the call (at the top-level run too, for a sub-workflow's run), gives it back when the
 * call fails or made no model call (`tokensOf` → null), and otherwise counts its tokens in the step's usage and
 * settles them. A call the budget refuses fails the step with reason `budget_exceeded`.
 */
async function budgeted<T>(
  ctx: AgentStepContext,
  usage: Usage,
  key: string,
  call: () => Promise<T>,
  tokensOf: (result: T) => TokenUsage | null,
): Promise<T> {
  while (verdictPending(ctx.spend)) await untilVerdict(ctx.spend);
  reserveCall(ctx.spend, usage);
  const refused = ctx.shared ? await ctx.shared.reserve(key) : null;
  if (refused !== null) {
    releaseCall(ctx.spend);
    throw budgetExceeded(refused, ctx.spend, usage);
  }
  const giveBack = async () => {
    releaseCall(ctx.spend);
    await ctx.shared?.settle(key, 0, true);
  };
  const result = await call().catch(async (err: unknown) => {
    // No answer, no tokens: the call is given back (its attempts are bounded by the step's retry policy).
    await giveBack();
    throw err;
  });
  const tokens = tokensOf(result);
  if (tokens === null) {
    await giveBack();
    return result;
  }
  const used = callUsage(tokens);
  addUsage(usage, used);
  ctx.onCall?.(used);
  await ctx.shared?.settle(key, tokens.input_tokens + tokens.output_tokens, false);
  settleCall(ctx.spend, tokens, usage);
  return result;
}
