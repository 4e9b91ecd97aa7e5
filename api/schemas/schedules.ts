/** Request schemas of schedules (Temporal Schedules that start runs of a workflow). */
import { z } from 'zod';
import { TIME_ZONES } from './time-zones';
import { jsonDataObject } from './json';

export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'allow_all', 'cancel_other'] as const;

/** Temporal's own limits are wider; these keep one schedule's description small. */
const MAX_CRON_EXPRESSIONS = 10;
const MAX_NOTE = 500;
const YEAR_SECONDS = 366 * 24 * 3600;

const listedZones = new Set<string>(TIME_ZONES);
// A refinement over the list rather than z.enum: a refused zone's message names an example, not all 400-odd zones.
const timeZone = z
  .string()
  .refine((name) => listedZones.has(name), 'an IANA time zone such as Europe/Berlin')
  .meta({
    id: 'TimeZone',
    enum: [...TIME_ZONES],
    description: 'IANA time zone the cron expressions are read in (default UTC).',
  });
const instant = z.iso.datetime({ offset: true });
const cronExpression = z
  .string()
  .min(9)
  .max(200)
  .regex(/^[^\n]*$/, 'one line')
  .meta({ description: 'Five fields `minute hour day-of-month month day-of-week`, e.g. `0 8 * * 1-5`.' });

export const scheduleSpec = z
  .strictObject({
    cron: z
      .union([cronExpression, z.array(cronExpression).min(1).max(MAX_CRON_EXPRESSIONS)])
      .optional()
      .meta({ description: 'One cron expression or several (their fire times are united).' }),
    interval: z
      .strictObject({
        every_seconds: z.number().int().min(1).max(YEAR_SECONDS),
        offset_seconds: z.number().int().min(0).max(YEAR_SECONDS).optional(),
      })
      .optional()
      .meta({ description: 'Fire every N seconds (from the Unix epoch, shifted by offset_seconds).' }),
    time_zone: timeZone.optional(),
    start_at: instant.optional().meta({ description: 'No fires before this time.' }),
    end_at: instant.optional().meta({ description: 'No fires after this time; after start_at when both are given.' }),
    jitter_seconds: z.number().int().min(0).max(3600).optional(),
  })
  // The first rule below, as the document states it; the second (end after start) JSON Schema cannot state. Each
  // branch names its property, so a client generated from the document types the spec as one or the other.
  .meta({
    oneOf: [
      { type: 'object', required: ['cron'], properties: { cron: {} } },
      { type: 'object', required: ['interval'], properties: { interval: {} } },
    ],
  })
  .superRefine((spec, ctx) => {
    if ((spec.cron === undefined) === (spec.interval === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of cron or interval', path: ['cron'] });
    }
    if (spec.start_at && spec.end_at && Date.parse(spec.end_at) <= Date.parse(spec.start_at)) {
      ctx.addIssue({ code: 'custom', message: 'must be after start_at', path: ['end_at'] });
    }
  });

const overlap = z.enum(OVERLAP_POLICIES).meta({
  description:
    'When a fire comes while the previous run is still going: skip it (default), buffer one, allow all, or cancel the previous run.',
});
const input = jsonDataObject.meta({ description: 'Run input of every run, validated against config.input_schema.' });
const catchupWindow = z
  .number()
  .int()
  .min(10)
  .max(YEAR_SECONDS)
  .meta({ description: 'After an outage, fires missed by at most this long are still taken (default 3600).' });
const note = z.string().max(MAX_NOTE);

export const workflowSchedulesParams = z.strictObject({ id: z.string().min(1) });
export const scheduleIdParams = z.strictObject({ scheduleId: z.string().min(1) });

export const createScheduleBody = z.strictObject({
  spec: scheduleSpec,
  input: input.optional(),
  overlap: overlap.optional(),
  catchup_window_seconds: catchupWindow.optional(),
  paused: z.boolean().optional().meta({ description: 'Create it paused (resume later).' }),
  note: note.optional().meta({ description: 'Shown with the state (e.g. why it is paused).' }),
});

export const updateScheduleBody = z.strictObject({
  spec: scheduleSpec.optional(),
  input: input.optional(),
  overlap: overlap.optional(),
  catchup_window_seconds: catchupWindow.optional(),
});

export const pauseScheduleBody = z.strictObject({ note: note.optional() });

export const triggerScheduleBody = z.strictObject({
  overlap: overlap.optional().meta({ description: 'Overlap policy for this one run (default allow_all).' }),
});

export const backfillScheduleBody = z
  .strictObject({
    start_at: instant,
    end_at: instant.meta({ description: 'After start_at.' }),
    overlap: overlap.optional().meta({ description: 'Overlap policy for the backfilled runs (default allow_all).' }),
  })
  .superRefine((b, ctx) => {
    if (Date.parse(b.end_at) <= Date.parse(b.start_at)) {
      ctx.addIssue({ code: 'custom', message: 'must be after start_at', path: ['end_at'] });
    }
  });

export type ScheduleSpecInput = z.output<typeof scheduleSpec>;
