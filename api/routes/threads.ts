/**
 * Threads (docs/threads.md, decision 0600): conversations with one agent whose turns are runs. Create, list, read,
 * change and delete a thread; send a message (a turn); page the conversation; follow it live (SSE); cancel a turn;
 * fork at a message. Owner-scoped: another user's thread is a 404 everywhere. The commands are api/commands/threads/.
 */
import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import Router from '@koa/router';
import type { Context } from 'koa';
import { userId } from '../http/caller';
import { isId } from '../../db/ids';
import { isTerminal } from '../../db/runs';
import { threadMessagesCollection } from '../../db/thread-messages';
import {
  findOwnThread,
  threadSearchFilter,
  threadsCollection,
  updateOwnThread,
  type ThreadDoc,
} from '../../db/threads';
import { respond } from '../http/envelope';
import { BadRequestError, NotFoundError, UnprocessableError } from '../http/errors';
import { idempotencyKey } from '../http/idempotency-key';
import { pageQuery, paginate } from '../http/pagination';
import { authenticated } from '../http/route-deps';
import { validate } from '../middleware/validate';
import { presentRunEvent } from '../presenters/run-event';
import { presentMemoryVersion, presentThread, presentThreadMemory, presentThreadMessage } from '../presenters/thread';
import { memoryVersionsCollection } from '../../db/thread-memory';
import { changeMemory } from '../../shared/threads/memory';
import type { ApiDeps } from '../deps';
import {
  createThreadBody,
  forkThreadBody,
  putMemoryBody,
  listThreadsQuery,
  postMessageBody,
  postMessageQuery,
  threadEventId,
  threadEventsQuery,
  threadIdParams,
  turnParams,
  updateThreadBody,
} from '../schemas/threads';
import { postMessage } from '../commands/threads/post-message';
import { cancelTurn, createThread, deleteThread, forkThread } from '../commands/threads/thread-control';
import { followThreadEvents, type ThreadEventSink } from '../commands/threads/follow-thread';

export const listThreads = validate({ query: listThreadsQuery });
export const createThreadRoute = validate({ body: createThreadBody });
export const getThread = validate({ params: threadIdParams });
export const patchThread = validate({ params: threadIdParams, body: updateThreadBody });
export const removeThread = validate({ params: threadIdParams });
export const sendMessage = validate({ params: threadIdParams, query: postMessageQuery, body: postMessageBody });
export const listMessages = validate({ params: threadIdParams, query: pageQuery });
export const threadEvents = validate({ params: threadIdParams, query: threadEventsQuery });
export const cancelTurnRoute = validate({ params: turnParams });
export const forkRoute = validate({ params: threadIdParams, body: forkThreadBody });
export const getMemoryRoute = validate({ params: threadIdParams });
export const putMemoryRoute = validate({ params: threadIdParams, body: putMemoryBody });
export const memoryVersionsRoute = validate({ params: threadIdParams, query: pageQuery });

/** Sent first: how long a client waits before reconnecting after the connection drops (the SSE `retry:` field). */
const RECONNECT_MS = 1000;

function metadataFilter(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs) return undefined;
  return Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf(':')), p.slice(p.indexOf(':') + 1)]));
}

function resumeAfter(ctx: Context, after: { turn: number; seq: number } | undefined) {
  if (ctx.request.headers['last-event-id'] === undefined) return after ?? { turn: 0, seq: 0 };
  const parsed = threadEventId.safeParse(ctx.get('Last-Event-ID'));
  if (!parsed.success) throw new BadRequestError('Last-Event-ID: an event id of this stream (`<turn>.<seq>`)');
  return parsed.data;
}

function sseSink(out: PassThrough, signal: AbortSignal): ThreadEventSink {
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain', { signal });
  };
  return {
    event: (turn, doc) =>
      write(
        `id: ${turn}.${doc.seq}\nevent: ${doc.type}\ndata: ${JSON.stringify({ thread_turn: turn, ...presentRunEvent(doc) })}\n\n`,
      ),
    comment: (text) => write(`: ${text}\n\n`),
  };
}

export function threadRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/threads' });
  const auth = authenticated(deps);

  const ownThread = async (ctx: Context, id: string): Promise<ThreadDoc> => {
    const doc = isId('thr', id) ? await findOwnThread(deps.db, userId(ctx), id) : null;
    if (!doc) throw new NotFoundError(`thread ${id} not found`);
    return doc;
  };

  router.get('/', ...auth, listThreads, async (ctx) => {
    const { query } = listThreads.input(ctx);
    const docs = await paginate(ctx, {
      collection: threadsCollection(deps.db),
      filter: threadSearchFilter({
        ownerId: userId(ctx),
        templateId: query.template_id,
        metadata: metadataFilter(query.metadata),
        text: query.q,
      }),
      page: query,
      order: { sortField: 'created_at', direction: -1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, docs.map(presentThread));
  });

  router.post('/', ...auth, createThreadRoute, async (ctx) => {
    const { body } = createThreadRoute.input(ctx);
    const doc = await createThread(deps, {
      ownerId: userId(ctx),
      template: body.template,
      title: body.title ?? null,
      metadata: body.metadata ?? {},
      overrides: body.overrides ?? {},
    });
    ctx.set('Location', `/api/v1/threads/${doc._id}`);
    respond(ctx, 201, presentThread(doc));
  });

  router.get('/:id', ...auth, getThread, async (ctx) => {
    const { params } = getThread.input(ctx);
    respond(ctx, 200, presentThread(await ownThread(ctx, params.id)));
  });

  router.patch('/:id', ...auth, patchThread, async (ctx) => {
    const { params, body } = patchThread.input(ctx);
    const current = await ownThread(ctx, params.id);
    const updated = await updateOwnThread(deps.db, userId(ctx), current._id, {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    });
    if (!updated) throw new NotFoundError(`thread ${params.id} not found`);
    respond(ctx, 200, presentThread(updated));
  });

  router.delete('/:id', ...auth, removeThread, async (ctx) => {
    const { params } = removeThread.input(ctx);
    await deleteThread(deps, userId(ctx), params.id);
    respond(ctx, 200, { id: params.id, deleted: true });
  });

  router.post('/:id/messages', ...auth, sendMessage, async (ctx) => {
    const { params, query, body } = sendMessage.input(ctx);
    const thread = await ownThread(ctx, params.id);
    const accepted = await postMessage(deps, {
      ownerId: userId(ctx),
      threadId: thread._id,
      text: body.text,
      after: body.after,
      policy: body.policy,
      idempotencyKey: idempotencyKey(ctx),
      waitSeconds: query.wait ?? 0,
      charge: () => deps.limits.runStarts(ctx),
    });
    ctx.state.log.info({ thread_id: thread._id, turn: accepted.turn, run_id: accepted.run_id }, 'thread message');
    // 200 once the turn has ended within the wait (its reply when it completed), else 202: it runs or waits.
    respond(ctx, accepted.status === 'queued' || !isTerminal(accepted.status) ? 202 : 200, accepted);
  });

  router.get('/:id/messages', ...auth, listMessages, async (ctx) => {
    const { params, query } = listMessages.input(ctx);
    const thread = await ownThread(ctx, params.id);
    const docs = await paginate(ctx, {
      collection: threadMessagesCollection(deps.db),
      filter: { thread_id: thread._id },
      page: query,
      order: { sortField: '_id', direction: 1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, docs.map(presentThreadMessage));
  });

  const withMemory = async (ctx: Context, id: string): Promise<ThreadDoc> => {
    const doc = await ownThread(ctx, id);
    if (!doc.memory_schema) {
      throw new UnprocessableError(
        `thread ${id} has no working memory (its template has no memory_schema)`,
        'no_memory',
      );
    }
    return doc;
  };

  router.get('/:id/memory', ...auth, getMemoryRoute, async (ctx) => {
    const { params } = getMemoryRoute.input(ctx);
    respond(ctx, 200, presentThreadMemory(await withMemory(ctx, params.id)));
  });

  router.put('/:id/memory', ...auth, putMemoryRoute, async (ctx) => {
    const { params, body } = putMemoryRoute.input(ctx);
    const thread = await withMemory(ctx, params.id);
    const changed = await changeMemory(deps.db, thread._id, () => body.memory, {
      by: 'user',
      turn: null,
      call: null,
      ownerId: userId(ctx),
    });
    if (!changed.ok) {
      if (changed.kind === 'invalid') throw new BadRequestError(changed.problems.join('; '), 'invalid_memory');
      throw new NotFoundError(`thread ${params.id} not found`);
    }
    respond(ctx, 200, { memory: changed.memory, version: changed.version, schema: thread.memory_schema ?? {} });
  });

  router.get('/:id/memory/versions', ...auth, memoryVersionsRoute, async (ctx) => {
    const { params, query } = memoryVersionsRoute.input(ctx);
    const thread = await withMemory(ctx, params.id);
    const docs = await paginate(ctx, {
      collection: memoryVersionsCollection(deps.db),
      filter: { thread_id: thread._id },
      page: query,
      order: { sortField: '_id', direction: 1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, docs.map(presentMemoryVersion));
  });

  router.post('/:id/turns/:turn/cancel', ...auth, cancelTurnRoute, async (ctx) => {
    const { params } = cancelTurnRoute.input(ctx);
    respond(ctx, 202, await cancelTurn(deps, userId(ctx), params.id, params.turn));
  });

  router.post('/:id/fork', ...auth, forkRoute, async (ctx) => {
    const { params, body } = forkRoute.input(ctx);
    const fork = await forkThread(deps, userId(ctx), params.id, body.at, body.title);
    ctx.set('Location', `/api/v1/threads/${fork._id}`);
    respond(ctx, 201, presentThread(fork));
  });

  router.get('/:id/events', ...auth, threadEvents, async (ctx) => {
    const { params, query } = threadEvents.input(ctx);
    const owner = userId(ctx);
    const thread = await ownThread(ctx, params.id);
    const after = resumeAfter(ctx, query.after);
    const release = deps.streamSlots.take(owner);
    const out = new PassThrough();
    const closed = new AbortController();
    const finish = () => {
      closed.abort();
      release();
    };
    ctx.res.once('close', finish);
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set({ 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
    ctx.body = out;
    out.write(`retry: ${RECONNECT_MS}\n\n`);
    const log = ctx.state.log.child({ thread_id: thread._id });
    const { config } = deps;
    followThreadEvents(deps.db, thread._id, sseSink(out, closed.signal), {
      after,
      pollMs: config.EVENTS_POLL_MS,
      heartbeatMs: config.EVENTS_HEARTBEAT_SECONDS * 1000,
      deadline: Date.now() + config.EVENTS_MAX_STREAM_SECONDS * 1000,
      signal: closed.signal,
      untilIdle: query.until === 'idle',
    })
      .then((end) => log.debug({ end }, 'thread event stream done'))
      .catch((err: unknown) => {
        if (!closed.signal.aborted) log.warn({ err }, 'thread event stream failed; the client resumes');
      })
      .finally(() => {
        release();
        out.end();
      });
  });

  return router;
}
