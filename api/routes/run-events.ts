/**
 * GET /api/v1/workflows/runs/:runId/events — a run's events as Server-Sent Events (api/commands/run-events/follow.ts):
 * every step state change and agent turn, then `run.ended`, after which the stream ends. Resume with `Last-Event-ID`.
 * Everything that can be refused (key, unknown or others' run, bad resume id, no free stream slot) is answered with
 * the JSON envelope before the stream starts; after that, problems end the stream (the client resumes).
 */
import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import Router from '@koa/router';
import type { Context } from 'koa';
import { userId } from '../http/caller';
import { isId } from '../../db/ids';
import { findRun } from '../../db/runs';
import { followRunEvents, type EventSink } from '../commands/run-events/follow';
import { BadRequestError, NotFoundError } from '../http/errors';
import { validate } from '../middleware/validate';
import { presentRunEvent } from '../presenters/run-event';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import { lastEventIdHeader, runEventsParams, runEventsQuery } from '../schemas/run-events';

const stream = validate({ params: runEventsParams, query: runEventsQuery });

/** Sent first: how long a client waits before reconnecting after the connection drops (the SSE `retry:` field). */
const RECONNECT_MS = 1000;

function resumeAfter(ctx: Context, after: number | undefined): number {
  // Present but empty is refused like any other malformed id, not read as absent.
  if (ctx.request.headers['last-event-id'] === undefined) return after ?? 0;
  const header = ctx.get('Last-Event-ID');
  const parsed = lastEventIdHeader.safeParse(header);
  if (!parsed.success) throw new BadRequestError('Last-Event-ID: an event id (a whole number ≥ 0)', 'invalid_field');
  return parsed.data;
}

/** Writes SSE frames, waiting for `drain` when the client reads slower than events come. */
function sseSink(out: PassThrough, signal: AbortSignal): EventSink {
  const write = async (text: string) => {
    // A client gone while its buffer is full never drains: the abort of its close ends the wait.
    if (!out.write(text)) await once(out, 'drain', { signal });
  };
  return {
    event: (doc) => write(`id: ${doc.seq}\nevent: ${doc.type}\ndata: ${JSON.stringify(presentRunEvent(doc))}\n\n`),
    comment: (text) => write(`: ${text}\n\n`),
  };
}

export function runEventRoutes(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/workflows/runs' });
  const { config } = deps;
  const slots = deps.streamSlots;

  router.get('/:runId/events', ...authenticated(deps), stream, async (ctx) => {
    const { params, query } = stream.input(ctx);
    const owner = userId(ctx);
    const run = isId('run', params.runId) ? await findRun(deps.db, owner, params.runId) : null;
    if (!run) throw new NotFoundError(`run ${params.runId} not found`);
    const afterSeq = resumeAfter(ctx, query.after);
    const release = slots.take(owner);

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

    // Koa sends the response once this handler returns, so the stream runs on after it.
    const log = ctx.state.log.child({ run_id: run._id });
    followRunEvents(deps.db, run._id, sseSink(out, closed.signal), {
      afterSeq,
      pollMs: config.EVENTS_POLL_MS,
      heartbeatMs: config.EVENTS_HEARTBEAT_SECONDS * 1000,
      deadline: Date.now() + config.EVENTS_MAX_STREAM_SECONDS * 1000,
      signal: closed.signal,
    })
      .then((end) => log.debug({ end }, 'event stream done'))
      .catch((err: unknown) => {
        if (!closed.signal.aborted) log.warn({ err }, 'event stream failed; the client resumes with Last-Event-ID');
      })
      .finally(() => {
        release();
        out.end();
      });
  });

  return router;
}
