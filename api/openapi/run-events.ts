/** OpenAPI path of the run event stream (Server-Sent Events). */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors } from './kit';
import { RUN_EVENT_TYPES } from '../../db/run-events';
import { lastEventIdHeader, runEventsParams, runEventsQuery } from '../schemas/run-events';

/**
 * One item of the stream as an SSE parser reads it (the shape OpenAPI 3.2 calls `itemSchema`; in this 3.1 document
 * the media type's `schema` describes each item). `data` is text whose content is a RunEvent as JSON, stated the JSON
 * Schema way (`contentMediaType` + `contentSchema`) so a checker parses and validates it.
 */
const runEventItem = z
  .strictObject({
    event: z.enum(RUN_EVENT_TYPES).meta({ description: "The event's `type`." }),
    id: z
      .string()
      .regex(/^[0-9]+$/)
      .meta({ description: "The event's `seq`: resume after it with `Last-Event-ID`." }),
    data: z.string().meta({
      description: 'The event as JSON (RunEvent).',
      contentMediaType: 'application/json',
      contentSchema: { $ref: '#/components/schemas/RunEvent' },
    }),
  })
  .meta({ id: 'RunEventItem' });

export const runEventPaths: ZodOpenApiPathsObject = {
  '/api/v1/workflows/runs/{runId}/events': {
    get: {
      tags: ['runs'],
      summary: "Follow a run live: its events as Server-Sent Events until the run's end",
      description:
        'Frames are `id: <seq>`, `event: <type>`, `data: <RunEvent JSON>`. One event per step state change ' +
        '(started, retrying, waiting, completed, failed, skipped, child_run) and per agent turn (model call, tool ' +
        'call), then `run.ended`, after which the server ends the stream. Ids increase by one per event; resume with ' +
        'the `Last-Event-ID` header (or `?after=`) to get exactly the events after it. A client that connects after ' +
        'the end gets the whole log and the end. `: ping` comments every EVENTS_HEARTBEAT_SECONDS; the server also ' +
        'ends a stream after EVENTS_MAX_STREAM_SECONDS (resume). 429 `too_many_streams` past the open-stream limits.',
      security: BEARER,
      requestParams: {
        path: runEventsParams,
        query: runEventsQuery,
        header: z.strictObject({
          'Last-Event-ID': lastEventIdHeader.optional().meta({ description: 'The id of the last event received.' }),
        }),
      },
      responses: {
        200: {
          description: 'The event stream',
          content: { 'text/event-stream': { schema: runEventItem } },
        },
        ...errors(400, 401, 404),
      },
    },
  },
};
