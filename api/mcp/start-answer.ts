/**
 * The answer to a tool call that started a run: with task support, a task that is the run (CreateTaskResult, at
 * once); without, the run id and its status URL at once, to follow with `get_run`.
 */
import type { CallToolResult, CreateTaskResult } from '@modelcontextprotocol/sdk/types.js';
import type { StartedRun } from '../commands/start-run';
import type { ApiDeps } from '../deps';
import type { McpCaller } from './context';
import { jsonResult } from './results';
import { readRun } from './runs';
import { taskOf } from './tasks';

export async function startedAnswer(
  deps: ApiDeps,
  caller: McpCaller,
  started: StartedRun,
  asTask: boolean,
): Promise<CallToolResult | CreateTaskResult> {
  // Read back rather than assumed `queued`: a retried request answers with the run as it is now.
  const run = await readRun(deps, caller, started.run_id);
  if (asTask) return { task: taskOf(run) };
  return jsonResult({
    run_id: started.run_id,
    workflow_id: started.workflow_id,
    status: run.view.status,
    status_url: started.status_url,
    next: 'The run continues on its own: call get_run with this run_id for its status and outputs.',
  });
}
