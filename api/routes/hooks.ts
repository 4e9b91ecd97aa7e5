/**
 * Inbound webhooks. Managed with the owner's key under /workflows/:id/hooks (create, list, read, rename, enable or
 * disable, rotate the secret, delete); triggered without a key at POST /hooks/:hookId, which starts a run of the hook's
 * workflow with the request's JSON body as input — checked against the workflow's input_schema like any start.
 *
 * The public endpoint answers the same 404 for an unknown, disabled or malformed id (it reveals nothing else), checks
 * the signature before anything else of the request, then takes from the hook's own rate budget. Duplicates are
 * dropped by the start's idempotency (see `duplicateKey`).
 */
import { createHash } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { baseUrlOf, userId } from '../http/caller';
import {
  deleteOwnHook,
  findHook,
  findOwnHook,
  hooksCollection,
  insertHook,
  newHookId,
  newHookSecret,
  updateOwnHook,
  type HookDoc,
} from '../../db/hooks';
import { verifyHookSignature } from '../commands/hook-signature';
import { startRun } from '../commands/start-run';
import { respond } from '../http/envelope';
import { BadRequestError, ConflictError, NotFoundError, UnauthorizedError } from '../http/errors';
import { consumeOrRefuse } from '../middleware/rate-limit';
import { validate } from '../middleware/validate';
import { pageQuery, paginate } from '../http/pagination';
import { presentHook } from '../presenters/hook';
import { authenticated, ownWorkflow } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import {
  createHookBody,
  hookIdParams,
  updateHookBody,
  workflowHookParams,
  workflowHooksParams,
} from '../schemas/hooks';

export const listHooks = validate({ params: workflowHooksParams, query: pageQuery });
export const createHook = validate({ params: workflowHooksParams, body: createHookBody });
export const getHook = validate({ params: workflowHookParams });
export const patchHook = validate({ params: workflowHookParams, body: updateHookBody });
export const rotateHook = validate({ params: workflowHookParams });
export const removeHook = validate({ params: workflowHookParams });
export const deliver = validate({ params: hookIdParams });

const HOOK_ID = /^hook_[A-Za-z0-9_-]{32}$/;

/**
 * The start's idempotency key of a delivery, or undefined when it has none. A signed hook goes by the signed
 * `webhook-id` alone: any other header can be added, changed or dropped by whoever replays a captured delivery
 * within the timestamp tolerance, and would make it a new run. An unsigned hook authenticates nothing, so the sender's
 * `Idempotency-Key` only spares an honest sender's retries. The two live apart (`\0` cannot occur in a header), so a
 * key sent to a hook while it was unsigned never answers for a signed delivery after a rotation. Folded to a fixed
 * length: the start's keys are at most 200 visible characters.
 */
function duplicateKey(hook: HookDoc, ctx: Context): string | undefined {
  const key = hook.secret ? ctx.get('webhook-id') : ctx.get('Idempotency-Key');
  if (!key) return undefined;
  const scoped = hook.secret ? `${hook._id}\0${key}` : `${hook._id}\0unsigned\0${key}`;
  return `hook:${createHash('sha256').update(scoped).digest('base64url')}`;
}

export function hookRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const auth = authenticated(deps);

  const ownHook = async (ctx: Context, workflowId: string, hookId: string): Promise<HookDoc> => {
    const hook = HOOK_ID.test(hookId) ? await findOwnHook(deps.db, userId(ctx), workflowId, hookId) : null;
    if (!hook) throw new NotFoundError(`hook ${hookId} not found`);
    return hook;
  };

  router.get('/workflows/:id/hooks', ...auth, listHooks, async (ctx) => {
    const { params, query } = listHooks.input(ctx);
    const workflow = await ownWorkflow(deps, ctx, params.id);
    const docs = await paginate(ctx, {
      collection: hooksCollection(deps.db),
      filter: { owner_id: userId(ctx), workflow_id: workflow._id },
      page: query,
      order: { sortField: 'created_at', direction: 1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(
      ctx,
      200,
      docs.map((doc) => presentHook(doc, baseUrlOf(deps.config.PUBLIC_URL, ctx))),
    );
  });

  router.post('/workflows/:id/hooks', ...auth, createHook, async (ctx) => {
    const { params, body } = createHook.input(ctx);
    const workflow = await ownWorkflow(deps, ctx, params.id);
    const count = await hooksCollection(deps.db).countDocuments({ owner_id: userId(ctx), workflow_id: workflow._id });
    if (count >= deps.config.HOOKS_MAX_PER_WORKFLOW) {
      throw new ConflictError(`the workflow already has ${count} hooks (HOOKS_MAX_PER_WORKFLOW); delete one first`);
    }
    const now = new Date();
    const doc: HookDoc = {
      _id: newHookId(),
      owner_id: userId(ctx),
      workflow_id: workflow._id,
      name: body.name ?? null,
      secret: body.signed === false ? null : newHookSecret(),
      enabled: true,
      created_at: now,
      updated_at: now,
    };
    await insertHook(deps.db, doc);
    respond(ctx, 201, presentHook(doc, baseUrlOf(deps.config.PUBLIC_URL, ctx), { withSecret: true }));
  });

  router.get('/workflows/:id/hooks/:hookId', ...auth, getHook, async (ctx) => {
    const { params } = getHook.input(ctx);
    respond(
      ctx,
      200,
      presentHook(await ownHook(ctx, params.id, params.hookId), baseUrlOf(deps.config.PUBLIC_URL, ctx)),
    );
  });

  router.patch('/workflows/:id/hooks/:hookId', ...auth, patchHook, async (ctx) => {
    const { params, body } = patchHook.input(ctx);
    await ownHook(ctx, params.id, params.hookId);
    const updated = await updateOwnHook(deps.db, userId(ctx), params.id, params.hookId, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    });
    if (!updated) throw new NotFoundError(`hook ${params.hookId} not found`);
    respond(ctx, 200, presentHook(updated, baseUrlOf(deps.config.PUBLIC_URL, ctx)));
  });

  router.post('/workflows/:id/hooks/:hookId/rotate-secret', ...auth, rotateHook, async (ctx) => {
    const { params } = rotateHook.input(ctx);
    await ownHook(ctx, params.id, params.hookId);
    // Rotating also turns signatures on for a hook that had none.
    const updated = await updateOwnHook(deps.db, userId(ctx), params.id, params.hookId, { secret: newHookSecret() });
    if (!updated) throw new NotFoundError(`hook ${params.hookId} not found`);
    respond(ctx, 200, presentHook(updated, baseUrlOf(deps.config.PUBLIC_URL, ctx), { withSecret: true }));
  });

  router.delete('/workflows/:id/hooks/:hookId', ...auth, removeHook, async (ctx) => {
    const { params } = removeHook.input(ctx);
    await ownHook(ctx, params.id, params.hookId);
    await deleteOwnHook(deps.db, userId(ctx), params.id, params.hookId);
    respond(ctx, 200, { id: params.hookId, deleted: true });
  });

  // --- the public endpoint: no API key ---
  router.post('/hooks/:hookId', deliver, async (ctx) => {
    const { params } = deliver.input(ctx);
    const hook = HOOK_ID.test(params.hookId) ? await findHook(deps.db, params.hookId) : null;
    if (!hook || !hook.enabled) throw new NotFoundError('hook not found');
    const rawBody = (ctx.request as { rawBody?: string }).rawBody ?? '';
    if (hook.secret) {
      const verdict = verifyHookSignature(
        hook.secret,
        { id: ctx.get('webhook-id'), timestamp: ctx.get('webhook-timestamp'), signature: ctx.get('webhook-signature') },
        rawBody,
        Date.now(),
      );
      if (!verdict.ok) throw new UnauthorizedError(`signature refused: ${verdict.problem}`);
    }
    await consumeOrRefuse(deps.limits.hookDeliveries, hook._id);
    const body: unknown = ctx.request.body;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw new BadRequestError('the body must be a JSON object (it becomes the run input)', 'invalid_field');
    }
    const started = await startRun(deps, {
      ownerId: hook.owner_id,
      workflowId: hook.workflow_id,
      input: (body as Record<string, never> | undefined) ?? {},
      idempotencyKey: duplicateKey(hook, ctx),
      baseUrl: baseUrlOf(deps.config.PUBLIC_URL, ctx),
    });
    ctx.state.log = ctx.state.log.child({ run_id: started.run_id, hook_id: hook._id });
    ctx.state.log.info('run started by a hook');
    respond(ctx, 202, { run_id: started.run_id, workflow_id: started.workflow_id, status: started.status });
  });

  return router;
}
