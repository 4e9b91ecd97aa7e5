/**
 * Experiments (issue #47 item 2): a dataset version run through a workflow, each item × repetition an ordinary run
 * (tagged with the experiment), scored and summarised; compared with a baseline experiment. Owner-scoped: another
 * user's id is a 404 on every route. docs/evals.md "Experiments"; docs/decisions/0630-experiments.md.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { allResults, findResultsPage } from '../../db/experiment-results';
import { experimentsCollection, findOwnExperiment, type ExperimentDoc } from '../../db/experiments';
import { isId } from '../../db/ids';
import { compareExperiments, summarizeExperiment } from '../../domain/evals';
import { cancelExperiment, createExperiment, type ExperimentCommandDeps } from '../commands/experiments';
import { userId } from '../http/caller';
import { respond } from '../http/envelope';
import { BadRequestError, NotFoundError } from '../http/errors';
import { pageOrBadRequest, pageQuery, paginate, setNextLink } from '../http/pagination';
import { authenticated } from '../http/route-deps';
import { validate } from '../middleware/validate';
import {
  presentExperiment,
  presentExperimentDetail,
  presentExperimentResult,
  resultsOf,
} from '../presenters/experiment';
import type { ApiDeps } from '../deps';
import { compareQuery, createExperimentBody, experimentParams, listResultsQuery } from '../schemas/experiments';

export const listExperimentsRoute = validate({ query: pageQuery });
export const createExperimentRoute = validate({ body: createExperimentBody });
export const getExperimentRoute = validate({ params: experimentParams });
export const cancelExperimentRoute = validate({ params: experimentParams });
export const listResultsRoute = validate({ params: experimentParams, query: listResultsQuery });
export const compareRoute = validate({ params: experimentParams, query: compareQuery });

export function experimentRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const auth = authenticated(deps);
  const commands: ExperimentCommandDeps = {
    db: deps.db,
    config: deps.config,
    temporal: deps.temporal,
    inputValidators: deps.inputValidators,
  };

  const ownExperiment = async (ctx: Context, id: string): Promise<ExperimentDoc> => {
    const doc = isId('exp', id) ? await findOwnExperiment(deps.db, userId(ctx), id) : null;
    if (!doc) throw new NotFoundError(`experiment ${id} not found`);
    return doc;
  };

  router.get('/experiments', ...auth, listExperimentsRoute, async (ctx) => {
    const { query } = listExperimentsRoute.input(ctx);
    const docs = await paginate(ctx, {
      collection: experimentsCollection(deps.db),
      filter: { owner_id: userId(ctx) },
      page: query,
      order: { sortField: 'created_at', direction: -1 },
      baseUrl: deps.config.PUBLIC_URL,
    });
    respond(ctx, 200, docs.map(presentExperiment));
  });

  router.post('/experiments', ...auth, createExperimentRoute, async (ctx) => {
    const { body } = createExperimentRoute.input(ctx);
    const doc = await createExperiment(commands, userId(ctx), body);
    ctx.set('Location', `/api/v1/experiments/${doc._id}`);
    respond(ctx, 201, presentExperiment(doc));
  });

  router.get('/experiments/:id', ...auth, getExperimentRoute, async (ctx) => {
    const { params } = getExperimentRoute.input(ctx);
    const doc = await ownExperiment(ctx, params.id);
    const summary = summarizeExperiment(resultsOf(doc, await allResults(deps.db, doc._id)));
    respond(ctx, 200, presentExperimentDetail(doc, summary));
  });

  router.post('/experiments/:id/cancel', ...auth, cancelExperimentRoute, async (ctx) => {
    const { params } = cancelExperimentRoute.input(ctx);
    const doc = await ownExperiment(ctx, params.id);
    await cancelExperiment(commands, doc);
    respond(ctx, 202, { id: doc._id, cancel_requested: true });
  });

  router.get('/experiments/:id/results', ...auth, listResultsRoute, async (ctx) => {
    const { params, query } = listResultsRoute.input(ctx);
    const doc = await ownExperiment(ctx, params.id);
    const page = await pageOrBadRequest(() => findResultsPage(deps.db, doc._id, query));
    setNextLink(ctx, page.nextCursor, deps.config.PUBLIC_URL);
    respond(ctx, 200, page.items.map(presentExperimentResult));
  });

  router.get('/experiments/:id/compare', ...auth, compareRoute, async (ctx) => {
    const { params, query } = compareRoute.input(ctx);
    const candidate = await ownExperiment(ctx, params.id);
    const baseline = await ownExperiment(ctx, query.baseline);
    if (baseline.dataset_id !== candidate.dataset_id) {
      throw new BadRequestError(
        `baseline: experiment ${baseline._id} ran dataset ${baseline.dataset_id}, not ${candidate.dataset_id}`,
        'invalid_field',
      );
    }
    const comparison = compareExperiments(
      resultsOf(baseline, await allResults(deps.db, baseline._id)),
      resultsOf(candidate, await allResults(deps.db, candidate._id)),
      {
        ...(query.fail_on !== undefined ? { fail_on: query.fail_on } : {}),
        ...(query.regression_threshold !== undefined ? { regression_threshold: query.regression_threshold } : {}),
        ...(query.tolerance !== undefined ? { tolerance: query.tolerance } : {}),
      },
    );
    respond(ctx, 200, comparison);
  });

  return router;
}
