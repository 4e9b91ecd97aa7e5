/** The authentication every protected route starts with, and the caller's workflow. */
import type { Context, Middleware } from 'koa';
import { isId } from '../../db/ids';
import { findWorkflow, type WorkflowDoc } from '../../db/workflows';
import { userId } from './caller';
import { NotFoundError } from './errors';
import { requireUser } from '../middleware/auth';
import type { ApiDeps } from '../deps';

/**
 * Deny by default: a valid, unrevoked API key, then the per-key rate limit.
 * `router.get('/x', ...authenticated(deps), handler)` or `router.use(...authenticated(deps))`.
 */
export function authenticated(deps: ApiDeps): Middleware[] {
  return [requireUser(deps.keys), deps.limits.perKey];
}

/** The caller's workflow `id`, or 404 — for an unknown id, an ill-formed one and another user's alike. */
export async function ownWorkflow(deps: ApiDeps, ctx: Context, id: string): Promise<WorkflowDoc> {
  const workflow = isId('wf', id) ? await findWorkflow(deps.db, userId(ctx), id) : null;
  if (!workflow) throw new NotFoundError(`workflow ${id} not found`);
  return workflow;
}
