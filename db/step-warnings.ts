/**
 * What an agent step goes on without, made visible where a user looks: MCP tools left out of what the model is shown
 * (a server refused by the SSRF guard, unreachable, failing; a tool over a bound). The transcript's setup entry keeps
 * them with the step; this puts them in the step's status (`mcp_problems`) and the run's event log (`step.warning`),
 * so a server that silently offers no tools is not found only by reading transcripts. Written by the agent's first
 * model call, after the step is marked running.
 */
import type { Db } from 'mongodb';
import { appendRunEvents, grantFrom } from './run-events';
import { notTerminal, runsCollection } from './runs';
import { stepOf } from './step-events';

/** The status lists at most this many problems per step (a map's items add theirs); the transcripts keep them all. */
export const MCP_PROBLEMS_SHOWN = 20;

/**
 * Records the MCP problems of one execution (`ask`, `ask[2]`, `ask#1`) on its step and logs one `step.warning` for
 * the execution. Both are idempotent (a retried model call adds nothing), and a run that has ended is left alone.
 */
export async function recordMcpProblems(db: Db, runId: string, execId: string, problems: string[]): Promise<void> {
  if (problems.length === 0) return;
  const stepId = stepOf(execId);
  const allocatedAt = Date.now();
  const before = await runsCollection(db).findOneAndUpdate(
    { _id: runId, status: notTerminal, 'steps.id': stepId },
    {
      $set: { updated_at: new Date() },
      $addToSet: { 'steps.$[s].mcp_problems': { $each: problems.slice(0, MCP_PROBLEMS_SHOWN) } },
      $inc: { event_seq: 1 },
    },
    {
      arrayFilters: [{ 's.id': stepId, [`s.mcp_problems.${MCP_PROBLEMS_SHOWN - 1}`]: { $exists: false } }],
      returnDocument: 'before',
      projection: { event_seq: 1 },
    },
  );
  if (!before) return;
  const event = {
    type: 'step.warning' as const,
    key: `${execId}:step.warning:mcp_tools`,
    data: { exec_id: execId, step_id: stepId, source: 'mcp_tools', problems },
  };
  await appendRunEvents(db, runId, [event], grantFrom(before, allocatedAt));
}
