/**
 * GET /api/v1/approvals — the caller's inbox: every approval step waiting for their decision, across all runs, the
 * oldest first. Deciding one (POST …/runs/:runId/approve) removes it.
 */
import Router from '@koa/router';
import { baseUrlOf, userId } from '../http/caller';
import { approvalsCollection } from '../../db/approvals';
import { respond } from '../http/envelope';
import { validate } from '../middleware/validate';
import { paginate, pageQuery } from '../http/pagination';
import { presentApproval } from '../presenters/approval';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';

const list = validate({ query: pageQuery });

export function approvalRoutes(deps: ApiDeps): Router {
  const router = new Router();

  router.get('/approvals', ...authenticated(deps), list, async (ctx) => {
    const { query } = list.input(ctx);
    const docs = await paginate(ctx, {
      collection: approvalsCollection(deps.db),
      filter: { owner_id: userId(ctx) },
      page: query,
      order: { sortField: 'created_at', direction: 1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    const base = baseUrlOf(deps.config.PUBLIC_URL, ctx);
    respond(
      ctx,
      200,
      docs.map((doc) => presentApproval(doc, base)),
    );
  });

  return router;
}
