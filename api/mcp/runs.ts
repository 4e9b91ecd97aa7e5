/**
 * A run as MCP shows it (the `get_run` tool, a task's result): read through the status read (the command of
 * `GET /api/v1/workflows/runs/:runId/status`, which only reads), with the approvals it waits for, so a client can answer them with `decide_approval`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { approvalsCollection } from '../../db/approvals';
import { buildRunView } from '../../shared/run-view/build';
import type { RunView } from '../../shared/run-view/view';
import { TERMINAL_RUN_STATUSES } from '../../domain/run';
import { statusUrlOf } from '../http/caller';
import { getRunStatus, type StatusWait } from '../commands/run-status/read';
import type { ApiDeps } from '../deps';
import type { McpCaller } from './context';
import { jsonResult, toolError } from './results';

/** Approvals named in one answer: a map step can wait on many; the inbox (`list_approvals`) has them all. */
const APPROVALS_SHOWN = 10;

export interface WaitingApproval {
  step_id: string;
  message: string;
  instructions: string | null;
}

export interface McpRun {
  view: RunView;
  approvals: WaitingApproval[];
  statusUrl: string;
}

export async function readRun(deps: ApiDeps, caller: McpCaller, runId: string, wait?: StatusWait): Promise<McpRun> {
  const run = await getRunStatus(deps, caller.ownerId, runId, wait);
  const view = await buildRunView(deps.db, run, deps.config);
  // The view's status, not the stored one: the view derives `waiting` from the steps.
  const approvals =
    view.status === 'waiting'
      ? await approvalsCollection(deps.db)
          .find({ owner_id: caller.ownerId, run_id: runId })
          .sort({ created_at: 1 })
          .limit(APPROVALS_SHOWN)
          .toArray()
      : [];
  return {
    view,
    approvals: approvals.map((a) => ({ step_id: a.step_id, message: a.message, instructions: a.instructions })),
    statusUrl: statusUrlOf(caller.baseUrl, runId),
  };
}

export const runEnded = (run: McpRun) => TERMINAL_RUN_STATUSES.includes(run.view.status);

/** What `get_run` answers: status, outputs when there are any, the error of a failed run, what it waits for. */
export function runSummary(run: McpRun): Record<string, unknown> {
  const { view } = run;
  return {
    run_id: view.run_id,
    workflow_id: view.workflow_id,
    workflow_name: view.workflow_name,
    status: view.status,
    outputs: view.outputs,
    error: view.error,
    waiting_for: run.approvals,
    steps: view.steps.map((s) => ({ id: s.id, status: s.status })),
    created_at: view.created_at,
    completed_at: view.completed_at,
    status_url: run.statusUrl,
  };
}

/** The tool result of an ended run: its outputs, or a tool error saying how it ended and why. */
export function endedRunResult(run: McpRun): CallToolResult {
  const { view } = run;
  switch (view.status) {
    case 'completed':
      return jsonResult({
        run_id: view.run_id,
        workflow_id: view.workflow_id,
        status: view.status,
        outputs: view.outputs,
        status_url: run.statusUrl,
      });
    case 'failed':
    case 'timed_out':
    case 'cancelled': {
      const why = view.error
        ? `: ${view.error.step_id ? `step ${view.error.step_id}: ` : ''}${view.error.message}`
        : '';
      return toolError(`run ${view.run_id} ${view.status.replace('_', ' ')}${why}`, runSummary(run));
    }
    case 'queued':
    case 'running':
    case 'waiting':
      return toolError(`run ${view.run_id} has not ended (${view.status})`, runSummary(run));
  }
}
