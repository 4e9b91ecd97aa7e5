/**
 * Schedules: a workflow's runs started by a Temporal Schedule (cron or interval, time zone, overlap policy, catch-up
 * window). Created and listed under /workflows/:id/schedules; read, changed, paused, resumed, triggered, backfilled
 * and deleted at /schedules/:scheduleId. Ownership lives in MongoDB (another user's id is a 404, like an unknown
 * one); the timing lives in Temporal, which is asked for the state, the next fire times and the recent runs.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { userId } from '../http/caller';
import { isId, newId } from '../../db/ids';
import { runsCollection } from '../../db/runs';
import {
  countOwnSchedules,
  deleteOwnSchedule,
  findOwnSchedule,
  insertSchedule,
  schedulesCollection,
  updateOwnSchedule,
  type ScheduleDoc,
  type ScheduleSpecDoc,
} from '../../db/schedules';
import {
  compileSpecApart,
  countTemporalFires,
  createTemporalSchedule,
  deleteTemporalSchedule,
  describeCompiledSpec,
  onTemporalSchedule,
  temporalOverlap,
  updateTemporalSchedule,
  type ScheduleCommandDeps,
} from '../commands/schedules';
import { tooFrequent } from '../commands/schedule-gaps';
import { respond } from '../http/envelope';
import { BadRequestError, ConflictError, NotFoundError } from '../http/errors';
import { validate } from '../middleware/validate';
import { pageQuery, paginate } from '../http/pagination';
import { presentSchedule, recentRunIds, type RecentRunDocs, type ScheduleView } from '../presenters/schedule';
import { authenticated, ownWorkflow } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import {
  backfillScheduleBody,
  createScheduleBody,
  pauseScheduleBody,
  scheduleIdParams,
  triggerScheduleBody,
  updateScheduleBody,
  workflowSchedulesParams,
  type ScheduleSpecInput,
} from '../schemas/schedules';

export const listSchedules = validate({ params: workflowSchedulesParams, query: pageQuery });
export const createSchedule = validate({ params: workflowSchedulesParams, body: createScheduleBody });
export const getSchedule = validate({ params: scheduleIdParams });
export const patchSchedule = validate({ params: scheduleIdParams, body: updateScheduleBody });
export const removeSchedule = validate({ params: scheduleIdParams });
export const pauseSchedule = validate({ params: scheduleIdParams, body: pauseScheduleBody });
export const resumeSchedule = validate({ params: scheduleIdParams, body: pauseScheduleBody });
export const triggerSchedule = validate({ params: scheduleIdParams, body: triggerScheduleBody });
export const backfillSchedule = validate({ params: scheduleIdParams, body: backfillScheduleBody });

/** Temporal's default is a year; an hour keeps a long outage from starting a day's worth of old runs at once. */
const DEFAULT_CATCHUP_WINDOW_SECONDS = 3600;
/** A backfill takes every fire of its range at once: bounded so one request cannot start thousands of runs. */
const MAX_BACKFILL_RUNS = 100;

function specDoc(spec: ScheduleSpecInput): ScheduleSpecDoc {
  return {
    ...(spec.cron !== undefined ? { cron: typeof spec.cron === 'string' ? [spec.cron] : spec.cron } : {}),
    ...(spec.interval !== undefined ? { interval: spec.interval } : {}),
    ...(spec.time_zone !== undefined ? { time_zone: spec.time_zone } : {}),
    ...(spec.start_at !== undefined ? { start_at: spec.start_at } : {}),
    ...(spec.end_at !== undefined ? { end_at: spec.end_at } : {}),
    ...(spec.jitter_seconds !== undefined ? { jitter_seconds: spec.jitter_seconds } : {}),
  };
}

export function scheduleRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const auth = authenticated(deps);
  const temporal: ScheduleCommandDeps = { config: deps.config, temporal: deps.temporal };
  const minInterval = deps.config.SCHEDULE_MIN_INTERVAL_SECONDS;

  const ownSchedule = async (ctx: Context, id: string): Promise<ScheduleDoc> => {
    const schedule = isId('sch', id) ? await findOwnSchedule(deps.db, userId(ctx), id) : null;
    if (!schedule) throw new NotFoundError(`schedule ${id} not found`);
    return schedule;
  };
  /**
   * An interval below the minimum is refused before Temporal hears of it, whatever the jitter (which delays each fire,
   * not the rate). A cron's gaps are read from Temporal's compiled form of it (commands/schedule-gaps.ts).
   */
  const checkInterval = (spec: ScheduleSpecDoc) => {
    if (spec.interval && spec.interval.every_seconds < minInterval) {
      throw new BadRequestError(
        `spec.interval.every_seconds: at least ${minInterval} (SCHEDULE_MIN_INTERVAL_SECONDS)`,
        'invalid_field',
      );
    }
  };
  /** The schedule with Temporal's view of it; the recent runs' status from the run documents (one query). */
  const view = async (ctx: Context, doc: ScheduleDoc, justSet?: ScheduleView['state']): Promise<ScheduleView> => {
    const description = await onTemporalSchedule(temporal, doc._id, (s) => s.describe());
    // Pause and resume reach Temporal's scheduler as signals; a describe right after may not show them yet.
    if (justSet) description.state = { ...description.state, paused: justSet.paused, note: justSet.note ?? undefined };
    const ids = recentRunIds(description);
    const runs: RecentRunDocs = new Map();
    if (ids.length > 0) {
      const docs = await runsCollection(deps.db)
        .find({ _id: { $in: ids }, owner_id: userId(ctx) }, { projection: { _id: 1, status: 1, error: 1 } })
        .toArray();
      for (const run of docs) runs.set(run._id, run);
    }
    return presentSchedule(doc, description, runs);
  };

  router.get('/workflows/:id/schedules', ...auth, listSchedules, async (ctx) => {
    const { params, query } = listSchedules.input(ctx);
    const workflow = await ownWorkflow(deps, ctx, params.id);
    const docs = await paginate(ctx, {
      collection: schedulesCollection(deps.db),
      filter: { owner_id: userId(ctx), workflow_id: workflow._id },
      page: query,
      order: { sortField: 'created_at', direction: 1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, await Promise.all(docs.map((doc) => view(ctx, doc))));
  });

  router.post('/workflows/:id/schedules', ...auth, createSchedule, async (ctx) => {
    const { params, body } = createSchedule.input(ctx);
    const owner = userId(ctx);
    const workflow = await ownWorkflow(deps, ctx, params.id);
    const spec = specDoc(body.spec);
    checkInterval(spec);
    const input = body.input ?? {};
    deps.inputValidators.check(workflow, input);
    const count = await countOwnSchedules(deps.db, owner);
    if (count >= deps.config.SCHEDULES_MAX_PER_USER) {
      throw new ConflictError(`you already have ${count} schedules (SCHEDULES_MAX_PER_USER); delete one first`);
    }
    const now = new Date();
    const doc: ScheduleDoc = {
      _id: newId('sch'),
      owner_id: owner,
      workflow_id: workflow._id,
      spec,
      overlap: body.overlap ?? 'skip',
      catchup_window_seconds: body.catchup_window_seconds ?? DEFAULT_CATCHUP_WINDOW_SECONDS,
      input,
      created_at: now,
      updated_at: now,
    };
    const paused = body.paused ?? false;
    // A cron spec is created paused and checked against the minimum gap first, so one that fires too often never
    // fires at all; then resumed as asked.
    const checkCron = spec.cron !== undefined;
    await createTemporalSchedule(temporal, doc, workflow, { paused: paused || checkCron, note: body.note });
    try {
      if (checkCron) {
        const problem = tooFrequent(await describeCompiledSpec(temporal, doc._id), minInterval, Date.now());
        if (problem) throw new BadRequestError(problem, 'invalid_field');
      }
      await insertSchedule(deps.db, doc);
    } catch (err) {
      await deleteTemporalSchedule(temporal, doc._id).catch(() => undefined);
      throw err;
    }
    const note = body.note || (checkCron && !paused ? 'created through the Stepwise API' : null);
    if (checkCron && !paused) await onTemporalSchedule(temporal, doc._id, (s) => s.unpause(note ?? ''));
    respond(ctx, 201, await view(ctx, doc, { paused, note }));
  });
  router.get('/schedules/:scheduleId', ...auth, getSchedule, async (ctx) => {
    const { params } = getSchedule.input(ctx);
    respond(ctx, 200, await view(ctx, await ownSchedule(ctx, params.scheduleId)));
  });

  router.patch('/schedules/:scheduleId', ...auth, patchSchedule, async (ctx) => {
    const { params, body } = patchSchedule.input(ctx);
    const before = await ownSchedule(ctx, params.scheduleId);
    const workflow = await ownWorkflow(deps, ctx, before.workflow_id);
    const next: ScheduleDoc = {
      ...before,
      ...(body.spec !== undefined ? { spec: specDoc(body.spec) } : {}),
      ...(body.input !== undefined ? { input: body.input } : {}),
      ...(body.overlap !== undefined ? { overlap: body.overlap } : {}),
      ...(body.catchup_window_seconds !== undefined ? { catchup_window_seconds: body.catchup_window_seconds } : {}),
    };
    checkInterval(next.spec);
    deps.inputValidators.check(workflow, next.input);
    if (body.spec?.cron !== undefined) {
      const problem = tooFrequent(await compileSpecApart(temporal, next, workflow), minInterval, Date.now());
      if (problem) throw new BadRequestError(problem, 'invalid_field');
    }
    await updateTemporalSchedule(temporal, next, workflow);
    const updated = await updateOwnSchedule(deps.db, userId(ctx), next._id, {
      spec: next.spec,
      input: next.input,
      overlap: next.overlap,
      catchup_window_seconds: next.catchup_window_seconds,
    });
    if (!updated) throw new NotFoundError(`schedule ${params.scheduleId} not found`);
    respond(ctx, 200, await view(ctx, updated));
  });

  router.delete('/schedules/:scheduleId', ...auth, removeSchedule, async (ctx) => {
    const { params } = removeSchedule.input(ctx);
    const doc = await ownSchedule(ctx, params.scheduleId);
    // Temporal first: a schedule that stays in MongoDB after a failed delete can be deleted again.
    await deleteTemporalSchedule(temporal, doc._id);
    await deleteOwnSchedule(deps.db, userId(ctx), doc._id);
    respond(ctx, 200, { id: doc._id, deleted: true });
  });

  router.post('/schedules/:scheduleId/pause', ...auth, pauseSchedule, async (ctx) => {
    const { params, body } = pauseSchedule.input(ctx);
    const doc = await ownSchedule(ctx, params.scheduleId);
    // Never an empty note: Temporal reads an empty pause or unpause note as "no change" (the call would do nothing).
    const note = body.note || 'paused through the Stepwise API';
    await onTemporalSchedule(temporal, doc._id, (s) => s.pause(note));
    respond(ctx, 200, await view(ctx, doc, { paused: true, note }));
  });

  router.post('/schedules/:scheduleId/resume', ...auth, resumeSchedule, async (ctx) => {
    const { params, body } = resumeSchedule.input(ctx);
    const doc = await ownSchedule(ctx, params.scheduleId);
    const note = body.note || 'resumed through the Stepwise API';
    await onTemporalSchedule(temporal, doc._id, (s) => s.unpause(note));
    respond(ctx, 200, await view(ctx, doc, { paused: false, note }));
  });

  router.post('/schedules/:scheduleId/trigger', ...auth, triggerSchedule, async (ctx) => {
    const { params, body } = triggerSchedule.input(ctx);
    const doc = await ownSchedule(ctx, params.scheduleId);
    await onTemporalSchedule(temporal, doc._id, (s) => s.trigger(temporalOverlap(body.overlap ?? 'allow_all')));
    respond(ctx, 202, { id: doc._id, triggered: true });
  });

  router.post('/schedules/:scheduleId/backfill', ...auth, backfillSchedule, async (ctx) => {
    const { params, body } = backfillSchedule.input(ctx);
    const doc = await ownSchedule(ctx, params.scheduleId);
    const start = new Date(body.start_at);
    const end = new Date(body.end_at);
    if (end.getTime() > Date.now()) throw new BadRequestError('end_at: must be in the past', 'invalid_field');
    // Counted by Temporal for cron and interval specs alike, before the backfill is asked for.
    if ((await countTemporalFires(temporal, doc._id, { start, end })) > MAX_BACKFILL_RUNS) {
      throw new BadRequestError(`end_at: the range holds more than ${MAX_BACKFILL_RUNS} runs`, 'invalid_field');
    }
    const overlap = temporalOverlap(body.overlap ?? 'allow_all');
    await onTemporalSchedule(temporal, doc._id, (s) => s.backfill({ start, end, overlap }));
    respond(ctx, 202, { id: doc._id, backfilled: true });
  });

  return router;
}
