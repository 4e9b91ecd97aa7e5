/** OpenAPI paths of schedules (Temporal Schedules starting runs of a workflow). */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, jsonRequest, ok } from './kit';
import { scheduleView } from '../presenters/schedule';
import { pageQuery } from '../http/pagination';
import {
  backfillScheduleBody,
  createScheduleBody,
  pauseScheduleBody,
  scheduleIdParams,
  triggerScheduleBody,
  updateScheduleBody,
  workflowSchedulesParams,
} from '../schemas/schedules';

const tags = ['schedules'];
const optionalBody = (schema: z.ZodType) => ({ ...jsonRequest(schema), required: false });

export const schedulesPaths: ZodOpenApiPathsObject = {
  '/api/v1/workflows/{id}/schedules': {
    get: {
      tags,
      summary: "The workflow's schedules",
      security: BEARER,
      requestParams: { path: workflowSchedulesParams, query: pageQuery },
      responses: {
        ...ok(200, 'One page of schedules', z.array(scheduleView), { paged: true }),
        ...errors(400, 401, 404),
      },
    },
    post: {
      tags,
      summary: 'Run the workflow on a schedule (a Temporal Schedule: cron or interval, time zone, overlap policy)',
      description:
        'Exactly one of `spec.cron` and `spec.interval`. Each fire starts a run whose snapshot is taken when it ' +
        'starts (edits of the workflow are picked up by the next run); the run carries `schedule_id`. 400 for a ' +
        'spec Temporal cannot read or that fires more often than SCHEDULE_MIN_INTERVAL_SECONDS; 409 past ' +
        'SCHEDULES_MAX_PER_USER.',
      security: BEARER,
      requestParams: { path: workflowSchedulesParams },
      requestBody: jsonRequest(createScheduleBody),
      responses: { ...ok(201, 'The new schedule', scheduleView), ...errors(400, 401, 404, 409, 413, 415) },
    },
  },
  '/api/v1/schedules/{scheduleId}': {
    get: {
      tags,
      summary: 'One schedule: its spec, state, next run times and recent runs',
      security: BEARER,
      requestParams: { path: scheduleIdParams },
      responses: { ...ok(200, 'The schedule', scheduleView), ...errors(401, 404) },
    },
    patch: {
      tags,
      summary: "Change a schedule's spec, input, overlap policy or catch-up window",
      security: BEARER,
      requestParams: { path: scheduleIdParams },
      requestBody: jsonRequest(updateScheduleBody),
      responses: { ...ok(200, 'The schedule', scheduleView), ...errors(400, 401, 404, 413, 415) },
    },
    delete: {
      tags,
      summary: 'Delete a schedule (runs already started go on)',
      security: BEARER,
      requestParams: { path: scheduleIdParams },
      responses: {
        ...ok(200, 'Deleted', z.strictObject({ id: z.string(), deleted: z.literal(true) })),
        ...errors(401, 404),
      },
    },
  },
  '/api/v1/schedules/{scheduleId}/pause': {
    post: {
      tags,
      summary: 'Pause a schedule, with an optional note',
      security: BEARER,
      requestParams: { path: scheduleIdParams },
      requestBody: optionalBody(pauseScheduleBody),
      responses: { ...ok(200, 'The schedule', scheduleView), ...errors(400, 401, 404, 413, 415) },
    },
  },
  '/api/v1/schedules/{scheduleId}/resume': {
    post: {
      tags,
      summary: 'Resume a paused schedule, with an optional note',
      security: BEARER,
      requestParams: { path: scheduleIdParams },
      requestBody: optionalBody(pauseScheduleBody),
      responses: { ...ok(200, 'The schedule', scheduleView), ...errors(400, 401, 404, 413, 415) },
    },
  },
  '/api/v1/schedules/{scheduleId}/trigger': {
    post: {
      tags,
      summary: 'Start one run now (also while paused)',
      security: BEARER,
      requestParams: { path: scheduleIdParams },
      requestBody: optionalBody(triggerScheduleBody),
      responses: {
        ...ok(202, 'Temporal will start the run', z.strictObject({ id: z.string(), triggered: z.literal(true) })),
        ...errors(400, 401, 404, 413, 415),
      },
    },
  },
  '/api/v1/schedules/{scheduleId}/backfill': {
    post: {
      tags,
      summary: 'Start the runs the schedule would have started in a past time range',
      description:
        'At most 100 fires in the range (counted by Temporal, cron or interval); `overlap` defaults to allow_all so ' +
        'each fire is a run.',
      security: BEARER,
      requestParams: { path: scheduleIdParams },
      requestBody: jsonRequest(backfillScheduleBody),
      responses: {
        ...ok(202, 'Temporal will start the runs', z.strictObject({ id: z.string(), backfilled: z.literal(true) })),
        ...errors(400, 401, 404, 413, 415),
      },
    },
  },
};
