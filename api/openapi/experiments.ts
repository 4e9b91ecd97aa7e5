/** OpenAPI paths of experiments, their results and the comparison with a baseline. */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { BEARER, errors, jsonRequest, ok } from './kit';
import { pageQuery } from '../http/pagination';
import { experimentDetailView, experimentResultView, experimentView, replayDiffView } from '../presenters/experiment';
import {
  compareQuery,
  createExperimentBody,
  experimentParams,
  listResultsQuery,
  MAX_EXPERIMENTS_PER_USER,
} from '../schemas/experiments';

const tags = ['experiments'];

const scorerStatsView = z
  .strictObject({
    n: z.number().int(),
    mean: z.number(),
    sd: z.number(),
    ci95: z
      .tuple([z.number(), z.number()])
      .nullable()
      .meta({ description: '95 % t-interval for the mean, clipped to [0, 1]; null with fewer than two scores.' }),
    pass_rate: z.number(),
  })
  .meta({ id: 'ScorerStats' });

const distributionView = z
  .strictObject({ n: z.number().int(), mean: z.number(), p50: z.number(), p95: z.number() })
  .nullable()
  .meta({ id: 'Distribution', description: 'Per item run; null when no run has the figure.' });

const usageSummaryView = z
  .strictObject({
    tokens: distributionView,
    llm_calls: distributionView,
    cost: distributionView,
    latency_ms: distributionView,
    errors: z.number().int().meta({ description: 'Item runs that failed.' }),
  })
  .meta({ id: 'UsageSummary' });

const changeView = z.enum(['improved', 'regressed', 'unchanged']);

const comparisonView = z
  .strictObject({
    baseline_id: z.string(),
    candidate_id: z.string(),
    scorers: z.array(
      z.strictObject({
        name: z.string(),
        baseline: scorerStatsView.nullable(),
        candidate: scorerStatsView.nullable(),
        delta: z
          .number()
          .nullable()
          .meta({ description: 'Candidate mean − baseline mean; null when one side lacks it.' }),
      }),
    ),
    items: z.array(
      z.strictObject({
        item_id: z.string(),
        change: z.enum(['improved', 'regressed', 'mixed', 'unchanged', 'only_baseline', 'only_candidate']),
        scorers: z.array(
          z.strictObject({
            name: z.string(),
            baseline: z.number().nullable().meta({ description: "Mean over the item's repetitions." }),
            candidate: z.number().nullable(),
            delta: z.number().nullable(),
            change: changeView.nullable(),
            pass_change: z.enum(['pass_to_fail', 'fail_to_pass']).nullable(),
          }),
        ),
        steps: z
          .strictObject({
            changed: z.array(z.string()),
            unchanged: z.array(z.string()),
            added: z.array(z.string()),
            removed: z.array(z.string()),
          })
          .optional()
          .meta({ description: 'For items with step outputs on both sides (replay mode): which steps changed.' }),
        replay: replayDiffView.optional().meta({
          description:
            'Items the candidate replayed (its first repetition): each step replayed from the recorded run or ' +
            'executed, and for executed steps the output change against the record.',
        }),
      }),
    ),
    counts: z.strictObject({
      improved: z.number().int(),
      regressed: z.number().int(),
      mixed: z.number().int(),
      unchanged: z.number().int(),
      only_baseline: z.number().int(),
      only_candidate: z.number().int(),
    }),
    usage: z.strictObject({ baseline: usageSummaryView, candidate: usageSummaryView }),
    regression: z.strictObject({ regressed: z.boolean(), reasons: z.array(z.string()) }),
  })
  .meta({
    id: 'ExperimentComparison',
    description:
      "Per scorer both sides' mean, spread and 95 % interval and the delta; per item improved / regressed / mixed / " +
      'unchanged (beyond `tolerance`); tokens, cost and latency side by side; and the regression verdict the CI gate ' +
      'exits on (a mean dropping by more than `regression_threshold`, default 0.05, or with fail_on=any_item also ' +
      'an item that passed in every baseline repetition and fails now). docs/evals.md "Comparing experiments".',
  });

export const experimentsPaths: ZodOpenApiPathsObject = {
  '/api/v1/experiments': {
    get: {
      tags,
      summary: 'Your experiments, newest first',
      security: BEARER,
      requestParams: { query: pageQuery },
      responses: {
        ...ok(200, 'One page of experiments', z.array(experimentView), { paged: true }),
        ...errors(400, 401),
      },
    },
    post: {
      tags,
      summary: 'Create and start an experiment: a dataset version run through a workflow, scored',
      description:
        'The dataset version (default the latest) is pinned. Each item × repetition runs as an ordinary run tagged ' +
        'with the experiment, at most `concurrency` at once. 400 for a scorer that does not compile (naming its ' +
        'path, e.g. `scorers[1].pattern`), an override naming a step the workflow does not have (or one that is not ' +
        "an agent step), an item whose input the workflow's input_schema refuses (naming the item, with the " +
        'schema’s message), an empty version; in mode `replay` also an item not recorded from a run, an item whose ' +
        'recorded run no longer exists or has not ended, and a side-effect step (HTTP request, e-mail) that would ' +
        'run again — changed, or downstream of a change — naming the item and the step (code `replay_refused`), and ' +
        '`replay` options with another mode. 404 for a dataset or ' +
        `workflow that is not yours. At most ${MAX_EXPERIMENTS_PER_USER} experiments (409 \`too_many_experiments\`).`,
      security: BEARER,
      requestBody: jsonRequest(createExperimentBody),
      responses: {
        ...ok(201, 'The experiment (queued)', experimentView, { location: 'The experiment.' }),
        ...errors(400, 401, 404, 409, 413, 415, 503),
      },
    },
  },
  '/api/v1/experiments/{id}': {
    get: {
      tags,
      summary: 'One experiment: status, progress, spend and per-scorer summary',
      security: BEARER,
      requestParams: { path: experimentParams },
      responses: { ...ok(200, 'The experiment', experimentDetailView), ...errors(401, 404) },
    },
  },
  '/api/v1/experiments/{id}/cancel': {
    post: {
      tags,
      summary: 'Cancel an experiment and the runs it has in flight',
      description: 'The experiment ends `cancelled` once its runs have recorded theirs. 409 once it has ended.',
      security: BEARER,
      requestParams: { path: experimentParams },
      responses: {
        ...ok(202, 'Cancellation requested', z.strictObject({ id: z.string(), cancel_requested: z.literal(true) })),
        ...errors(401, 404, 409, 503),
      },
    },
  },
  '/api/v1/experiments/{id}/results': {
    get: {
      tags,
      summary: 'Item results: scores with their reasons, usage, latency, output, run id — in the items’ order',
      security: BEARER,
      requestParams: { path: experimentParams, query: listResultsQuery },
      responses: {
        ...ok(200, 'One page of results', z.array(experimentResultView), { paged: true }),
        ...errors(400, 401, 404),
      },
    },
  },
  '/api/v1/experiments/{id}/compare': {
    get: {
      tags,
      summary: 'This experiment against a baseline experiment of the same dataset',
      description: 'Both must be yours (404 otherwise); another dataset is a 400.',
      security: BEARER,
      requestParams: { path: experimentParams, query: compareQuery },
      responses: { ...ok(200, 'The comparison', comparisonView), ...errors(400, 401, 404) },
    },
  },
};
