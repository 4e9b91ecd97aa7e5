/** `delay`: a durable timer in the workflow (no activity). Exactly one of `seconds` or `until`. */
import { z } from 'zod';
import type { ActionDefinition } from './types';

/** A run may wait at most this long in one delay step. */
export const MAX_DELAY_SECONDS = 30 * 24 * 3600;

const config = z.strictObject({
  seconds: z.number().positive().max(MAX_DELAY_SECONDS).optional().describe('How long to wait, in seconds'),
  until: z.iso.datetime({ offset: true }).optional().describe('Wait until this instant (ISO 8601 with offset or Z)'),
});

const output = z.object({
  /** When the timer was due (ISO 8601). */
  until: z.string(),
  /** Seconds actually waited (0 when `until` was already past). */
  waited_seconds: z.number(),
});

export const delayAction = {
  name: 'delay',
  description: 'Pause the run durably for `seconds`, or until an ISO 8601 instant `until` (at most 30 days).',
  config,
  refine(cfg, ctx) {
    if ((cfg.seconds === undefined) === (cfg.until === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'exactly one of seconds or until is required', path: ['seconds'] });
    }
  },
  output,
} satisfies ActionDefinition<'delay', typeof config, typeof output>;
