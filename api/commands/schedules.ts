/**
 * Schedules on Temporal's side: each Stepwise schedule is a Temporal Schedule of the same id whose action starts
 * `scheduledRunWorkflow` (temporal/workflows/scheduled-run.ts). Temporal holds the timing, the pause state and the
 * recent actions; MongoDB (db/schedules.ts) holds ownership. Errors are mapped here: Temporal unreachable → 503, a
 * spec Temporal refuses → 400 naming the field, a Schedule missing on Temporal's side → 404.
 */
import { randomBytes } from 'node:crypto';
import {
  ScheduleNotFoundError,
  type Client,
  type ScheduleHandle,
  type ScheduleOptions,
  type ScheduleOverlapPolicy,
  type ScheduleSpec,
} from '@temporalio/client';
import { msNumberToTs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import type { Db } from 'mongodb';
import type { Config } from '../../config';
import {
  deleteOwnSchedule,
  workflowScheduleIds,
  type OverlapPolicy,
  type ScheduleDoc,
  type ScheduleSpecDoc,
} from '../../db/schedules';
import { SCHEDULED_RUN_WORKFLOW_TYPE, scheduledRunIdBase, type ScheduledRunArgs } from '../../domain/schedule';
import { ownerIdKey, workflowIdKey } from '../../domain/search-attributes';
import { BadRequestError, NotFoundError, ServiceUnavailableError } from '../http/errors';
import { isTemporalUnavailable } from '../http/infra-errors';

/** How long Temporal gets to answer a schedule call before the API answers 503. */
const CALL_DEADLINE_MS = 10_000;

export interface ScheduleCommandDeps {
  config: Config;
  temporal: Client;
}

/** The workflow facts the action needs, read when the schedule is written. */
export interface ScheduledWorkflow {
  _id: string;
  name: string;
  config: { timeout_seconds?: number | undefined };
}

const OVERLAP: Record<OverlapPolicy, ScheduleOverlapPolicy> = {
  skip: 'SKIP',
  buffer_one: 'BUFFER_ONE',
  allow_all: 'ALLOW_ALL',
  cancel_other: 'CANCEL_OTHER',
};

export function temporalOverlap(policy: OverlapPolicy): ScheduleOverlapPolicy {
  return OVERLAP[policy];
}

function temporalSpec(spec: ScheduleSpecDoc): ScheduleSpec {
  return {
    ...(spec.cron ? { cronExpressions: spec.cron } : {}),
    ...(spec.interval
      ? {
          intervals: [
            {
              every: spec.interval.every_seconds * 1000,
              ...(spec.interval.offset_seconds ? { offset: spec.interval.offset_seconds * 1000 } : {}),
            },
          ],
        }
      : {}),
    ...(spec.time_zone ? { timezone: spec.time_zone } : {}),
    ...(spec.start_at ? { startAt: new Date(spec.start_at) } : {}),
    ...(spec.end_at ? { endAt: new Date(spec.end_at) } : {}),
    ...(spec.jitter_seconds ? { jitter: spec.jitter_seconds * 1000 } : {}),
  };
}

/** What Temporal stores for a schedule: its spec, the action with its fixed input, and the policies. */
function scheduleParts(deps: ScheduleCommandDeps, doc: ScheduleDoc, workflow: ScheduledWorkflow) {
  const args: ScheduledRunArgs = {
    schedule_id: doc._id,
    owner_id: doc.owner_id,
    workflow_id: doc.workflow_id,
    input: doc.input,
  };
  return {
    spec: temporalSpec(doc.spec),
    action: {
      type: 'startWorkflow' as const,
      workflowType: SCHEDULED_RUN_WORKFLOW_TYPE,
      workflowId: scheduledRunIdBase(doc._id),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [args],
      // The workflow's timeout as the schedule is written (an edited timeout is taken on the schedule's next update).
      ...(workflow.config.timeout_seconds ? { workflowExecutionTimeout: workflow.config.timeout_seconds * 1000 } : {}),
      memo: { stepwise_workflow_id: doc.workflow_id, workflow_name: workflow.name, owner_id: doc.owner_id },
      // What the Web UI shows for each run the schedule starts.
      staticSummary: `${workflow.name} (schedule ${doc._id})`,
      typedSearchAttributes: [
        { key: workflowIdKey, value: doc.workflow_id },
        { key: ownerIdKey, value: doc.owner_id },
      ],
    },
    policies: { overlap: temporalOverlap(doc.overlap), catchupWindow: doc.catchup_window_seconds * 1000 },
  };
}

/** Runs one Temporal call with a deadline, mapping its failures into API errors. */
async function call<T>(deps: ScheduleCommandDeps, scheduleId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await deps.temporal.connection.withDeadline(Date.now() + CALL_DEADLINE_MS, fn);
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw new NotFoundError(`schedule ${scheduleId} not found`);
    if (isTemporalUnavailable(err)) throw new ServiceUnavailableError('Temporal');
    // The SDK and the server refuse a spec they cannot read (a cron with the wrong fields, an unknown zone) with a
    // TypeError or an INVALID_ARGUMENT whose message says what is wrong; both are the caller's mistake.
    if (err instanceof TypeError || (err as { code?: unknown }).code === 3) {
      throw new BadRequestError(`spec: ${(err as Error).message}`, 'invalid_field');
    }
    throw err;
  }
}

/** One call on the Temporal Schedule (describe, pause, trigger…), with `call`'s deadline and error mapping. */
export function onTemporalSchedule<T>(
  deps: ScheduleCommandDeps,
  scheduleId: string,
  fn: (schedule: ScheduleHandle) => Promise<T>,
): Promise<T> {
  return call(deps, scheduleId, () => fn(deps.temporal.schedule.getHandle(scheduleId)));
}

export async function createTemporalSchedule(
  deps: ScheduleCommandDeps,
  doc: ScheduleDoc,
  workflow: ScheduledWorkflow,
  state: { paused: boolean; note?: string | undefined },
): Promise<void> {
  const options: ScheduleOptions = {
    scheduleId: doc._id,
    ...scheduleParts(deps, doc, workflow),
    state: { paused: state.paused, ...(state.note !== undefined ? { note: state.note } : {}) },
    memo: { stepwise_workflow_id: doc.workflow_id, owner_id: doc.owner_id },
    typedSearchAttributes: [
      { key: workflowIdKey, value: doc.workflow_id },
      { key: ownerIdKey, value: doc.owner_id },
    ],
  };
  await call(deps, doc._id, () => deps.temporal.schedule.create(options));
}

/** Replaces spec, action and policies; the pause state and note stay as they are. */
export async function updateTemporalSchedule(
  deps: ScheduleCommandDeps,
  doc: ScheduleDoc,
  workflow: ScheduledWorkflow,
): Promise<void> {
  const parts = scheduleParts(deps, doc, workflow);
  await onTemporalSchedule(deps, doc._id, (schedule) =>
    schedule.update((prev) => ({
      ...prev,
      spec: parts.spec,
      action: parts.action,
      policies: { ...prev.policies, ...parts.policies },
    })),
  );
}

/**
 * How many fires of the schedule fall in a range, as Temporal computes them (its own cron reading, time zone, start
 * and end). Temporal stops counting at a thousand or so, which is all a bound on backfills needs.
 */
export async function countTemporalFires(
  deps: ScheduleCommandDeps,
  scheduleId: string,
  range: { start: Date; end: Date },
): Promise<number> {
  const answer = await call(deps, scheduleId, () =>
    deps.temporal.workflowService.listScheduleMatchingTimes({
      namespace: deps.temporal.options.namespace,
      scheduleId,
      // A backfill takes a fire at its very start; the matching times begin after it.
      startTime: msNumberToTs(range.start.getTime() - 1000),
      endTime: msNumberToTs(range.end.getTime()),
    }),
  );
  return answer.startTime?.length ?? 0;
}

/**
 * The spec as Temporal compiled it: cron strings turned into structured calendars or intervals. Read raw rather than
 * through the SDK's describe: the numbers Temporal's own matcher reads (the SDK turns months and weekdays into names),
 * and any field left uncompiled stays visible.
 */
export async function describeCompiledSpec(
  deps: ScheduleCommandDeps,
  scheduleId: string,
): Promise<temporal.api.schedule.v1.IScheduleSpec> {
  const answer = await call(deps, scheduleId, () =>
    deps.temporal.workflowService.describeSchedule({ namespace: deps.temporal.options.namespace, scheduleId }),
  );
  return answer.schedule?.spec ?? {};
}

/**
 * A spec as Temporal compiles it, read from a paused scratch Schedule that is deleted at once: a changed spec is
 * checked before the live Schedule takes it, so a refused one never fires and nothing has to be put back. (A scratch
 * left by a crash is paused and never fires.)
 */
export async function compileSpecApart(
  deps: ScheduleCommandDeps,
  doc: ScheduleDoc,
  workflow: ScheduledWorkflow,
): Promise<temporal.api.schedule.v1.IScheduleSpec> {
  const scratch: ScheduleDoc = { ...doc, _id: `${doc._id}-check-${randomBytes(9).toString('base64url')}` };
  await createTemporalSchedule(deps, scratch, workflow, { paused: true, note: 'checking a spec; deleted at once' });
  try {
    return await describeCompiledSpec(deps, scratch._id);
  } finally {
    await deleteTemporalSchedule(deps, scratch._id).catch(() => undefined);
  }
}

/** Deletes the Temporal Schedule; one already gone counts as deleted. */
export async function deleteTemporalSchedule(deps: ScheduleCommandDeps, scheduleId: string): Promise<void> {
  try {
    await onTemporalSchedule(deps, scheduleId, (schedule) => schedule.delete());
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

/**
 * Deletes a workflow's schedules, on Temporal's side and here, before the workflow goes (they could only record
 * failed runs after it). Temporal unreachable: 503 with the workflow still there, so the delete can be repeated.
 */
export async function deleteWorkflowSchedules(
  deps: ScheduleCommandDeps & { db: Db },
  ownerId: string,
  workflowId: string,
): Promise<void> {
  for (const id of await workflowScheduleIds(deps.db, ownerId, workflowId)) {
    await deleteTemporalSchedule(deps, id);
    await deleteOwnSchedule(deps.db, ownerId, id);
  }
}
