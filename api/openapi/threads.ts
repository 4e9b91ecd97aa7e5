/** OpenAPI paths of threads (docs/threads.md). */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, jsonRequest, ok } from './kit';
import { RUN_EVENT_TYPES } from '../../db/run-events';
import { pageQuery } from '../http/pagination';
import {
  acceptedMessageView,
  memoryVersionView,
  threadMemoryView,
  threadMessageView,
  threadView,
} from '../presenters/thread';
import {
  createThreadBody,
  forkThreadBody,
  putMemoryBody,
  listThreadsQuery,
  postMessageBody,
  postMessageQuery,
  threadEventsQuery,
  threadIdParams,
  turnParams,
  updateThreadBody,
} from '../schemas/threads';
import { MAX_THREAD_MESSAGE_BYTES } from '../../domain/thread';

const tags = ['threads'];

const idempotencyHeader = z.strictObject({
  'Idempotency-Key': z
    .string()
    .regex(/^[ \t]*[\x21-\x7e]{1,200}[ \t]*$/)
    .optional()
    .meta({
      description:
        'Same key + same body → the same message and turn (never a second turn); other body → 422. Kept 7 days.',
    }),
});

const threadEventItem = z
  .strictObject({
    event: z.enum(RUN_EVENT_TYPES).meta({ description: "The event's `type` (a run event of the turn's run)." }),
    id: z
      .string()
      .regex(/^[0-9]+\.[0-9]+$/)
      .meta({ description: '`<turn>.<seq>`: resume after it with `Last-Event-ID`.' }),
    data: z.string().meta({
      description: 'The run event as JSON (RunEvent) with `thread_turn`, the turn it belongs to.',
      contentMediaType: 'application/json',
    }),
  })
  .meta({ id: 'ThreadEventItem' });

export const threadsPaths: ZodOpenApiPathsObject = {
  '/api/v1/threads': {
    get: {
      tags,
      summary: 'Your threads, newest first',
      description:
        'Filters combine (AND): `template_id`, `metadata=key:value` (repeatable; string values), `q` (text in the ' +
        'title). Paged (`limit`, `cursor`, `Link: rel="next"`).',
      security: BEARER,
      requestParams: { query: listThreadsQuery },
      responses: { ...ok(200, 'One page of threads', z.array(threadView), { paged: true }), ...errors(400, 401) },
    },
    post: {
      tags,
      summary: 'Start a conversation with an agent template',
      description:
        'The template by id or name (422 `unknown_template`, `not_an_agent`). `overrides` change the model, add ' +
        'instructions, replace tools or MCP tools, set the thread budget and the message policy for every turn.',
      security: BEARER,
      requestBody: jsonRequest(createThreadBody),
      responses: {
        ...ok(201, 'The new thread', threadView, { location: 'The thread’s URL.' }),
        ...errors(400, 401, 413, 415, 422),
      },
    },
  },
  '/api/v1/threads/{id}': {
    get: {
      tags,
      summary: 'One thread: message count, usage, the running turn',
      security: BEARER,
      requestParams: { path: threadIdParams },
      responses: { ...ok(200, 'The thread', threadView), ...errors(401, 404) },
    },
    patch: {
      tags,
      summary: 'Change a thread’s title or metadata',
      security: BEARER,
      requestParams: { path: threadIdParams },
      requestBody: jsonRequest(updateThreadBody),
      responses: { ...ok(200, 'The thread', threadView), ...errors(400, 401, 404, 413, 415) },
    },
    delete: {
      tags,
      summary: 'Delete a thread and everything of it',
      description:
        'A running turn is cancelled first (terminated when it does not end within 10 s); then the turns’ runs, ' +
        'transcripts, events, approvals, the messages and the thread are removed. 409 `turn_running` while a ' +
        'workflow’s agent step is taking a turn (its run is the workflow’s: cancel that run or wait for the step); ' +
        'the workflow runs whose steps took turns are not removed.',
      security: BEARER,
      requestParams: { path: threadIdParams },
      responses: {
        ...ok(200, 'Deleted', z.strictObject({ id: z.string(), deleted: z.literal(true) })),
        ...errors(401, 404, 409),
      },
    },
  },
  '/api/v1/threads/{id}/messages': {
    post: {
      tags,
      summary: 'Send a message: the thread’s next turn',
      description:
        `\`text\` of 1 to ${MAX_THREAD_MESSAGE_BYTES} UTF-8 bytes (413 \`message_too_large\` above). 202 with ` +
        'the message and its turn (and the turn’s run); with `?wait=N`, 200 once the turn ended within N seconds ' +
        '(with the reply when it completed; `status` and the user message’s `error` say why not). 409 `turn_running` (policy `reject`, naming the running turn), ' +
        '`stale_after` (`after` is not the last message), `thread_deleting`, `in_flight` (same key still under ' +
        'way). 422 `thread_budget_exceeded` (with the numbers), `idempotency_mismatch`, `thread_invalid` (its ' +
        'template is gone). 429 when the run-start rate or USER_MAX_CONCURRENT_RUNS is reached.',
      security: BEARER,
      requestParams: { path: threadIdParams, query: postMessageQuery, header: idempotencyHeader },
      requestBody: jsonRequest(postMessageBody),
      responses: {
        ...ok(200, 'The turn ended within the wait (its reply when it completed)', acceptedMessageView),
        ...ok(202, 'Accepted: the turn runs (or waits for the turns before it)', acceptedMessageView),
        ...errors(400, 401, 404, 409, 413, 415, 422),
      },
    },
    get: {
      tags,
      summary: 'The conversation, oldest first',
      description:
        'User messages (with their turn’s state, error and usage), assistant messages (with their tool calls), ' +
        'tool results, summaries, and approvals: a tool call that waited for your decision (`role: approval`, ' +
        'after the assistant message that made the call and before its result), listed from when it was asked ' +
        '(`requested`) and then with the decision, who made it and when. The rest of a turn’s answer appears ' +
        'when the turn has ended; follow `…/events` for it live.',
      security: BEARER,
      requestParams: { path: threadIdParams, query: pageQuery },
      responses: {
        ...ok(200, 'One page of messages', z.array(threadMessageView), { paged: true }),
        ...errors(400, 401, 404),
      },
    },
  },
  '/api/v1/threads/{id}/memory': {
    get: {
      tags,
      summary: 'The thread’s working memory',
      description:
        'The memory document, its version and the JSON Schema it must fit (the template’s `memory_schema` when the ' +
        'thread was created). 422 `no_memory` when the template has none.',
      security: BEARER,
      requestParams: { path: threadIdParams },
      responses: { ...ok(200, 'The memory', threadMemoryView), ...errors(400, 401, 404, 422) },
    },
    put: {
      tags,
      summary: 'Replace the thread’s working memory',
      description:
        'The new document must fit the memory schema: else 400 `invalid_memory` naming the problems, and the ' +
        'memory is unchanged. Each change is a new version (`…/memory/versions`). 422 `no_memory` when the ' +
        'template has none.',
      security: BEARER,
      requestParams: { path: threadIdParams },
      requestBody: jsonRequest(putMemoryBody),
      responses: { ...ok(200, 'The memory as written', threadMemoryView), ...errors(400, 401, 404, 415, 422) },
    },
  },
  '/api/v1/threads/{id}/memory/versions': {
    get: {
      tags,
      summary: 'The memory’s versions, oldest first',
      description:
        'Every change of the working memory: by the user (PUT) or the agent (the `update_memory` tool, with its turn).',
      security: BEARER,
      requestParams: { path: threadIdParams, query: pageQuery },
      responses: {
        ...ok(200, 'One page of versions', z.array(memoryVersionView), { paged: true }),
        ...errors(400, 401, 404, 422),
      },
    },
  },
  '/api/v1/threads/{id}/events': {
    get: {
      tags,
      summary: 'Follow a thread live: its turns’ run events as Server-Sent Events',
      description:
        'Frames are `id: <turn>.<seq>`, `event: <type>`, `data: <RunEvent JSON + thread_turn>`: every event of ' +
        'each turn’s run in turn order (live text, tool calls, approvals, `run.ended`), then the next turn’s as it ' +
        'comes. Resume with `Last-Event-ID` (or `?after=`) to get exactly the events after it; `0.0` or nothing: ' +
        'from the first turn. The stream stays open for the next turns (`?until=idle`: it ends once every turn ' +
        'accepted so far was sent). `: ping` comments every EVENTS_HEARTBEAT_SECONDS; the server ends a stream ' +
        'after EVENTS_MAX_STREAM_SECONDS (resume).',
      security: BEARER,
      requestParams: {
        path: threadIdParams,
        query: threadEventsQuery,
        header: z.strictObject({
          'Last-Event-ID': z
            .string()
            .regex(/^[0-9]+\.[0-9]+$/)
            .optional()
            .meta({ description: 'The id of the last event received.' }),
        }),
      },
      responses: {
        200: { description: 'The event stream', content: { 'text/event-stream': { schema: threadEventItem } } },
        ...errors(400, 401, 404),
      },
    },
  },
  '/api/v1/threads/{id}/turns/{turn}/cancel': {
    post: {
      tags,
      summary: 'Cancel a turn',
      description:
        'A queued turn never starts (`run_id` null); a running one is cancelled as its run is (it ends ' +
        '`cancelled`, the next queued turn starts). 409 when the turn has ended, and `turn_running` for a turn a ' +
        'workflow’s agent step is taking (cancel that run instead).',
      security: BEARER,
      requestParams: { path: turnParams },
      responses: {
        ...ok(
          202,
          'Cancellation requested',
          z.strictObject({ thread_id: z.string(), turn: z.number().int(), run_id: z.string().nullable() }),
        ),
        ...errors(400, 401, 404, 409),
      },
    },
  },
  '/api/v1/threads/{id}/fork': {
    post: {
      tags,
      summary: 'Fork a thread at a message: a new thread with the conversation up to there',
      description:
        'The messages up to and including `at` are copied (no model call); the fork keeps the template, overrides ' +
        'and metadata. 422 `unknown_message` when `at` is not a message of the thread.',
      security: BEARER,
      requestParams: { path: threadIdParams },
      requestBody: jsonRequest(forkThreadBody),
      responses: {
        ...ok(201, 'The new thread', threadView, { location: 'The new thread’s URL.' }),
        ...errors(400, 401, 404, 413, 415, 422),
      },
    },
  },
};
