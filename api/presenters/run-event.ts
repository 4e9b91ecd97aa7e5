/** Run event → the `data:` JSON of one Server-Sent Event (docs/runs.md "Following a run" lists the types). */
import { z } from 'zod';
import { RUN_EVENT_TYPES, type LoggedRunEvent } from '../../db/run-events';
import { isoTimestamp } from './common';

export const runEventView = z
  .looseObject({
    seq: z
      .number()
      .int()
      .meta({ description: 'The event id (also the SSE `id:`): increasing from 1 (a number may be skipped).' }),
    type: z.enum(RUN_EVENT_TYPES),
    run_id: z.string(),
    at: isoTimestamp,
    exec_id: z.string().optional().meta({ description: 'Step events: `step`, `step[i]` (map item) or `step#n`.' }),
    step_id: z.string().optional(),
  })
  .meta({
    id: 'RunEvent',
    description:
      'One event. By type: step.started {attempt}; step.retrying {attempt, error}; step.waiting; step.completed ' +
      '{output | output_ref: {bytes}, usage?, reused_from_run_id?}; step.failed {error}; step.skipped {reason}; ' +
      'step.child_run {child_run_id}; agent.model_call {turn, usage, tool_calls, final, transcript_seq}; ' +
      'agent.tool_call {turn, tool, ok, summary, transcript_seq}; run.ended {status, error, usage, steps} — last.',
  });

export type RunEventView = z.infer<typeof runEventView>;

export function presentRunEvent(doc: LoggedRunEvent): RunEventView {
  const data = JSON.parse(doc.data_json) as Record<string, unknown>;
  return { ...data, seq: doc.seq, type: doc.type, run_id: doc.run_id, at: doc.at.toISOString() };
}
