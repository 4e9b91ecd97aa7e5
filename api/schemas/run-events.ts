/** Request schemas of the run event stream. */
import { z } from 'zod';
import { queryInteger } from '../http/query-integer';

export const runEventsParams = z.strictObject({ runId: z.string().min(1).max(600) });

const seq = queryInteger({ min: 0, max: Number.MAX_SAFE_INTEGER });

export const runEventsQuery = z.strictObject({
  after: seq.optional().meta({
    description: 'Deliver events after this id (as `Last-Event-ID`, for clients that cannot set headers).',
  }),
});

/** The standard resume header of Server-Sent Events; wins over `?after=`. */
export const lastEventIdHeader = seq;
