/**
 * A tool call inside a step that runs again in a replayed experiment item (docs/decisions/0640): answered from the
 * recorded run's transcript of the same step when it holds a call of the same tool with the same arguments, so no
 * live call is made; the run's snapshot (`rerun.tool_calls`) says what a call the record lacks gets. The tool
 * activities ask here before doing anything live.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { runsCollection } from '../../../db/runs';
import { transcriptsCollection } from '../../../db/transcripts';
import { REPLAY_MISS_FAILURE_TYPE, type ReplayToolCalls } from '../../../domain/experiment';
import { canonicalJson } from '../../../domain/json';
import type { LlmToolCall } from '../../../domain/transcript';
import type { ToolResult } from './recorded-call';

/** `live`: make the call. `recorded`: the result the record holds (written as served from `source_run_id`). */
export type ReplayAnswer =
  { kind: 'live' } | { kind: 'recorded'; result: ToolResult & { replayed_from_run_id: string } };

/** A replayed run's source and tool-call mode, as its snapshot has them; null for any other run. */
export interface ReplayOrigin {
  run_id: string;
  tool_calls: ReplayToolCalls;
}

/** Read alongside the activity's other reads, so a run that is no replay waits for nothing more. */
export async function replayOrigin(db: Db, runId: string): Promise<ReplayOrigin | null> {
  const run = await runsCollection(db).findOne(
    { _id: runId },
    { projection: { 'snapshot.rerun.run_id': 1, 'snapshot.rerun.tool_calls': 1 } },
  );
  const origin = run?.snapshot.rerun;
  return origin?.tool_calls !== undefined ? { run_id: origin.run_id, tool_calls: origin.tool_calls } : null;
}

/** Throws a non-retryable `replay_miss` failure (the step, so the item, fails) in mode `error_on_miss`. */
export async function replayAnswer(
  db: Db,
  origin: ReplayOrigin | null,
  at: { step_id: string },
  call: LlmToolCall,
): Promise<ReplayAnswer> {
  if (!origin || origin.tool_calls === 'live') return { kind: 'live' };
  const args = canonicalJson(call.args ?? null);
  const recorded =
    call.invalid_args === undefined
      ? await transcriptsCollection(db)
          .find({ run_id: origin.run_id, step_id: at.step_id, kind: 'tool', name: call.name })
          .sort({ seq: 1 })
          .toArray()
      : [];
  const hit = recorded.find((e) => e.kind === 'tool' && canonicalJson(e.args ?? null) === args);
  if (hit?.kind === 'tool') {
    return {
      kind: 'recorded',
      result: {
        output: hit.output,
        is_error: hit.is_error,
        error_code: hit.error_code,
        truncated: hit.truncated,
        replayed_from_run_id: origin.run_id,
      },
    };
  }
  if (origin.tool_calls === 'recorded') return { kind: 'live' };
  const clipped = (call.invalid_args ?? JSON.stringify(call.args ?? null)).slice(0, 200);
  throw ApplicationFailure.nonRetryable(
    `replay (tool_calls: error_on_miss): the recorded run ${origin.run_id} has no call of ${call.name} with these arguments in step ${at.step_id}: ${clipped}`,
    REPLAY_MISS_FAILURE_TYPE,
  );
}
