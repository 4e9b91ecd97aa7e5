/**
 * MCP tasks (protocol 2025-11-25, the SDK's experimental task support) where the task IS the run: task id = run id,
 * state read from the run projection each time, so any API process answers and nothing lives in process memory
 * (docs/decisions/0451-mcp-task-is-the-run.md). tasks/get maps the run's status; tasks/result waits for the end and
 * answers the run's outputs (or its error); tasks/cancel is the cancel route's command. Another user's run is an
 * unknown task.
 */
import { ErrorCode, McpError, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';
import { isId } from '../../db/ids';
import type { RunStatus } from '../../domain/run';
import { cancelRun } from '../commands/run-control';
import { ApiError, ConflictError, NotFoundError } from '../http/errors';
import type { ApiDeps } from '../deps';
import type { McpCaller } from './context';
import { endedRunResult, readRun, runEnded, type McpRun } from './runs';

/** What clients are told to wait between tasks/get calls: runs take seconds to hours. */
export const TASK_POLL_INTERVAL_MS = 1_000;
/** One long poll of tasks/result; it waits again until the run ends or the client goes away. */
const RESULT_WAIT_SECONDS = 20;
/** How long tasks/cancel waits for the run to record its cancellation before answering. */
const CANCEL_WAIT_SECONDS = 5;

export function taskStatusOf(status: RunStatus): Task['status'] {
  switch (status) {
    case 'queued':
    case 'running':
      return 'working';
    case 'waiting':
      return 'input_required';
    case 'completed':
      return 'completed';
    case 'failed':
    case 'timed_out':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
  }
}

/** The run as a task. A waiting run's message names each approval and how to answer it. */
export function taskOf(run: McpRun): Task {
  const { view } = run;
  let status = taskStatusOf(view.status);
  let statusMessage: string | undefined;
  // The run is marked waiting a moment before its approval is in the inbox: until then there is nothing to answer.
  if (status === 'input_required' && run.approvals.length === 0) {
    status = 'working';
    statusMessage = 'waiting for an approval';
  } else if (status === 'input_required') {
    const asks = run.approvals.map((a) => `step "${a.step_id}": ${a.message}`).join('; ');
    statusMessage =
      `waiting for approval — ${asks}. Answer with the decide_approval tool ` +
      `(run_id "${view.run_id}", step_id, approved).`;
  } else if (status === 'failed' && view.error) {
    statusMessage = `${view.status}: ${view.error.message}`;
  } else if (view.status === 'timed_out') {
    statusMessage = 'timed out';
  }
  return {
    taskId: view.run_id,
    status,
    // Runs are kept; their results do not expire.
    ttl: null,
    createdAt: view.created_at,
    lastUpdatedAt: view.updated_at,
    pollInterval: TASK_POLL_INTERVAL_MS,
    ...(statusMessage !== undefined ? { statusMessage } : {}),
  };
}

export async function getTask(deps: ApiDeps, caller: McpCaller, taskId: string): Promise<Task> {
  return taskOf(await readTaskRun(deps, caller, taskId));
}

/** Waits for the run's end (as long as the client waits), then answers what the tool call would have. */
export async function getTaskResult(
  deps: ApiDeps,
  caller: McpCaller,
  taskId: string,
  signal: AbortSignal,
): Promise<CallToolResult> {
  let run = await readTaskRun(deps, caller, taskId);
  while (!runEnded(run)) {
    if (signal.aborted) throw new McpError(ErrorCode.InvalidRequest, 'Request cancelled');
    run = await readTaskRun(deps, caller, taskId, RESULT_WAIT_SECONDS);
  }
  return endedRunResult(run);
}

/** Cancels the run (the cancel route's command), then answers the task once the run has recorded it, or at a bound. */
export async function cancelTask(deps: ApiDeps, caller: McpCaller, taskId: string): Promise<Task> {
  const runId = taskRunId(taskId);
  try {
    await cancelRun(deps, caller.ownerId, runId);
  } catch (err) {
    if (err instanceof ConflictError) throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task: ${err.message}`);
    throw asTaskError(err, taskId);
  }
  caller.log.info({ run_id: runId, via: 'mcp' }, 'run cancel requested');
  const run = await readTaskRun(deps, caller, taskId, CANCEL_WAIT_SECONDS);
  const task = taskOf(run);
  // Cancellation is requested and Temporal has it; the workflow records `cancelled` as it unwinds.
  return runEnded(run) ? task : { ...task, statusMessage: 'cancellation requested' };
}

async function readTaskRun(deps: ApiDeps, caller: McpCaller, taskId: string, waitSeconds?: number): Promise<McpRun> {
  try {
    return await readRun(deps, caller, taskRunId(taskId), { waitSeconds, until: 'end' });
  } catch (err) {
    throw asTaskError(err, taskId);
  }
}

/** The protocol's error for a failed command on a task's run: a run the caller cannot see is an unknown task. */
function asTaskError(err: unknown, taskId: string): unknown {
  if (err instanceof NotFoundError) return unknownTask(taskId);
  if (err instanceof ApiError) return new McpError(ErrorCode.InternalError, err.message);
  return err;
}

function taskRunId(taskId: string): string {
  if (!isId('run', taskId)) throw unknownTask(taskId);
  return taskId;
}

const unknownTask = (taskId: string) => new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
