/**
 * GET /api/v1/runs — the caller's runs across all workflows, newest first, filtered by status (several at once),
 * workflow, creation time and workflow name; paged like every list. The query is db/run-search.ts.
 */
import Router from '@koa/router';
import { userId } from '../http/caller';
import { runSearchFilter } from '../../db/run-search';
import { runsCollection, STATUS_PROJECTION, type RunDoc } from '../../db/runs';
import { respond } from '../http/envelope';
import { validate } from '../middleware/validate';
import { paginate } from '../http/pagination';
import { presentRunSearchItem } from '../presenters/run-search';
import { authenticated } from '../http/route-deps';
import type { ApiDeps } from '../deps';
import { runSearchQuery } from '../schemas/runs';

const search = validate({ query: runSearchQuery });

export function runRoutes(deps: ApiDeps): Router {
  const router = new Router();

  router.get('/runs', ...authenticated(deps), search, async (ctx) => {
    const { query } = search.input(ctx);
    const filter = runSearchFilter({
      ownerId: userId(ctx),
      statuses: query.status,
      workflowId: query.workflow_id,
      scheduleId: query.schedule_id,
      createdAfter: query.created_after,
      createdBefore: query.created_before,
      text: query.q,
    });
    const runs = await paginate<RunDoc>(ctx, {
      collection: runsCollection(deps.db),
      filter,
      page: query,
      order: { sortField: 'created_at', direction: -1 },
      // The snapshot (the largest part of a run document) is not shown in a list.
      projection: STATUS_PROJECTION,
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(
      ctx,
      200,
      runs.map((run) => presentRunSearchItem(run)),
    );
  });

  return router;
}
