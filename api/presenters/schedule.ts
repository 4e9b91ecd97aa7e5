/** Schedule → JSON: what was asked for (MongoDB) and what Temporal says of it (state, next fires, recent runs). */
import type { ScheduleDescription } from '@temporalio/client';
import { z } from 'zod';
import type { ScheduleDoc } from '../../db/schedules';
import type { RunDoc } from '../../db/runs';
import { runStatusSchema } from '../../domain/run-status';
import { OVERLAP_POLICIES } from '../schemas/schedules';
import { iso, isoTimestamp, jsonObjectView } from './common';

const recentRunView = z.strictObject({
  run_id: z.string(),
  scheduled_at: isoTimestamp.meta({ description: 'The fire time (jitter included).' }),
  started_at: isoTimestamp.meta({ description: 'When Temporal started the run.' }),
  status: runStatusSchema,
  error: z.strictObject({ reason: z.string(), message: z.string() }).nullable(),
});

export const scheduleView = z
  .strictObject({
    id: z.string().meta({ description: 'Also the Temporal Schedule id (Web UI → Schedules).' }),
    workflow_id: z.string(),
    spec: z.strictObject({
      cron: z.array(z.string()).optional(),
      interval: z.strictObject({ every_seconds: z.number(), offset_seconds: z.number().optional() }).optional(),
      time_zone: z.string().optional(),
      start_at: z.string().optional(),
      end_at: z.string().optional(),
      jitter_seconds: z.number().optional(),
    }),
    overlap: z.enum(OVERLAP_POLICIES),
    catchup_window_seconds: z.number(),
    input: jsonObjectView,
    state: z.strictObject({ paused: z.boolean(), note: z.string().nullable() }),
    counts: z
      .strictObject({
        runs_started: z.number().int(),
        skipped_for_overlap: z.number().int(),
        missed_catchup_window: z.number().int(),
      })
      .meta({ description: 'Since the schedule was created, as Temporal counts them.' }),
    next_run_times: z.array(isoTimestamp),
    recent_runs: z.array(recentRunView).meta({ description: 'Newest first (Temporal keeps the last ten).' }),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'Schedule' });

export type ScheduleView = z.infer<typeof scheduleView>;

/** The recorded runs of the description's recent actions, by run id. */
export type RecentRunDocs = Map<string, Pick<RunDoc, '_id' | 'status' | 'error'>>;

/** The run ids of the schedule's recent actions (to read their status in one query). */
export function recentRunIds(description: ScheduleDescription): string[] {
  return description.info.recentActions.map((a) => a.action.workflow.workflowId);
}

export function presentSchedule(doc: ScheduleDoc, description: ScheduleDescription, runs: RecentRunDocs): ScheduleView {
  const recent = [...description.info.recentActions].reverse().map((a) => {
    const run = runs.get(a.action.workflow.workflowId);
    return {
      run_id: a.action.workflow.workflowId,
      scheduled_at: iso(a.scheduledAt),
      started_at: iso(a.takenAt),
      // Not yet recorded: the worker has not taken the run's first task.
      status: run?.status ?? 'queued',
      error: run?.error ? { reason: run.error.reason, message: run.error.message } : null,
    };
  });
  return {
    id: doc._id,
    workflow_id: doc.workflow_id,
    spec: doc.spec,
    overlap: doc.overlap,
    catchup_window_seconds: doc.catchup_window_seconds,
    input: doc.input,
    state: { paused: description.state.paused, note: description.state.note || null },
    counts: {
      runs_started: description.info.numActionsTaken,
      skipped_for_overlap: description.info.numActionsSkippedOverlap,
      missed_catchup_window: description.info.numActionsMissedCatchupWindow,
    },
    next_run_times: description.info.nextActionTimes.map(iso),
    recent_runs: recent,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
  };
}
