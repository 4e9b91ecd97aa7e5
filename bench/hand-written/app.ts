/**
 * The hand-written service's API, the B1/B3/B8 reference: what a team would write by hand on Stepwise's stack (Koa,
 * the MongoDB driver, the Temporal client with Stepwise's payload codec) to start a workflow and read its status.
 *
 * - `POST /workflows/:id/run`: the bearer key by its SHA-256 hash, the caller's workflow, the run record inserted
 *   `queued`, the Temporal start (workflow id = run id); 202 with the run's id.
 * - `GET /runs/:id/status[?wait=<s>]`: the run record. With `wait`, a run not yet ended is read again once Temporal
 *   says its execution closed (its outcome is written just before), or when the wait is up — as Stepwise's
 *   `until=end`.
 * - T1's chat (./chat.ts).
 */
import { randomUUID } from 'node:crypto';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import type { Client } from '@temporalio/client';
import Koa, { type Context, type Next } from 'koa';
import type { Db } from 'mongodb';
import { addChatRoutes } from './chat';
import { hashKey, keys, runs, workflows } from './store';
import type { HandWrittenRun } from './workflows';

const MAX_WAIT_SECONDS = 30;

function fail(ctx: Context, status: number, error: string): void {
  ctx.status = status;
  ctx.body = { data: null, error };
}

export function createApp(db: Db, temporal: Client, taskQueue: string): Koa {
  const authenticate = async (ctx: Context, next: Next) => {
    const presented = /^Bearer (\S+)$/.exec(ctx.get('Authorization'))?.[1];
    const key = presented ? await keys(db).findOne({ hash: hashKey(presented) }) : null;
    if (!key) return fail(ctx, 401, 'unauthorized');
    ctx.state.ownerId = key.owner_id;
    await next();
  };

  const router = new Router();
  router.post('/workflows/:id/run', authenticate, async (ctx) => {
    const ownerId = ctx.state.ownerId as string;
    const workflow = await workflows(db).findOne({ _id: ctx.params.id!, owner_id: ownerId });
    if (!workflow) return fail(ctx, 404, 'workflow not found');
    const input = (ctx.request.body as { input?: unknown } | undefined)?.input ?? {};
    const runId = randomUUID();
    await runs(db).insertOne({
      _id: runId,
      owner_id: ownerId,
      workflow_id: workflow._id,
      status: 'queued',
      input,
      created_at: new Date(),
    });
    const run: HandWrittenRun = { runId, urls: workflow.steps.map((s) => s.url), input };
    await temporal.workflow.start('handWrittenWorkflow', { taskQueue, workflowId: runId, args: [run] });
    ctx.status = 202;
    ctx.body = { data: { run_id: runId, status: 'queued' }, error: null };
  });

  router.get('/runs/:id/status', authenticate, async (ctx) => {
    const filter = { _id: ctx.params.id!, owner_id: ctx.state.ownerId as string };
    const projection = { status: 1, output: 1, error: 1 };
    let run = await runs(db).findOne(filter, { projection });
    if (!run) return fail(ctx, 404, 'run not found');
    const wait = Math.min(MAX_WAIT_SECONDS, Number(ctx.query.wait ?? 0) || 0);
    if (wait > 0 && run.status === 'queued') {
      await temporal.connection
        .withDeadline(Date.now() + wait * 1000, () => temporal.workflow.getHandle(run!._id).result())
        .catch(() => undefined);
      run = (await runs(db).findOne(filter, { projection })) ?? run;
    }
    ctx.body = { data: { status: run.status, output: run.output ?? null, error: run.error ?? null }, error: null };
  });

  addChatRoutes(router, { db, temporal, taskQueue }, authenticate);

  const app = new Koa();
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: 256 * 1024 }));
  app.use(router.routes());
  return app;
}
