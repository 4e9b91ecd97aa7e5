/**
 * Request schemas of experiments (issue #47 item 2). Scorer declarations are validated here by shape and compiled by
 * the create command (a pattern, expression or schema that does not compile is a 400 naming its path).
 */
import { z } from 'zod';
import { compareOptionsSchema, scorerListSchema } from '../../domain/evals';
import { EXPERIMENT_MODES, REPLAY_TOOL_CALLS } from '../../domain/experiment';
import { pageQuery } from '../http/pagination';
import { queryFraction } from '../http/query-fraction';
import { rerunOverrides } from './workflows';

/** Runs of one experiment in flight at once, at most. */
export const MAX_CONCURRENCY = 16;
/** Repetitions of each item, at most. */
export const MAX_REPETITIONS = 10;
/** Experiments one user may have (they keep every result). */
export const MAX_EXPERIMENTS_PER_USER = 500;
export const DEFAULT_CONCURRENCY = 4;

export const experimentParams = z.strictObject({ id: z.string().min(1) });

export const experimentBudget = z
  .strictObject({
    max_tokens: z.number().int().min(1).optional().meta({ description: 'Input plus output tokens of every run.' }),
    max_model_calls: z.number().int().min(1).optional(),
  })
  .meta({
    description:
      'The hard budget: once either is reached no further item starts; the experiment ends `budget_exhausted` with ' +
      'the numbers. Runs already in flight (at most `concurrency`) finish and are counted.',
  });

export const experimentReplay = z
  .strictObject({
    tool_calls: z
      .enum(REPLAY_TOOL_CALLS)
      .optional()
      .meta({
        description:
          'Inside a step that runs again, a tool call: `recorded` (default) is answered from the recorded run when ' +
          'the same step called the same tool with the same arguments, else made live; `live` is always made live; ' +
          '`error_on_miss` is answered from the record, and a call the record does not hold fails the item.',
      }),
  })
  .meta({ description: 'Options of mode `replay` (400 with another mode).' });

export const createExperimentBody = z.strictObject({
  name: z.string().min(1).max(100).optional().meta({ description: 'Defaults to the id.' }),
  dataset_id: z.string().min(1).max(100),
  dataset_version: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'The version to run (default: the latest), pinned at creation.' }),
  workflow_id: z.string().min(1).max(100).meta({ description: 'The target: each item runs this workflow.' }),
  overrides: rerunOverrides.optional().meta({
    description: 'By agent step id: the model that step uses in this experiment, as a rerun takes it.',
    example: { draft: { model: 'openai:gpt-4o-mini' } },
  }),
  mode: z
    .enum(EXPERIMENT_MODES)
    .optional()
    .meta({
      description:
        '`live` (default) runs every item for real. `replay` runs each item recorded from a run with every step ' +
        'that did not change answered from that run (no model call, no request), only changed steps and their ' +
        'downstream executed; a side-effect step that would run again is a 400 naming it. docs/evals.md "Replay".',
    }),
  replay: experimentReplay.optional(),
  scorers: scorerListSchema,
  concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).optional().meta({ description: 'Default 4.' }),
  repetitions: z.number().int().min(1).max(MAX_REPETITIONS).optional().meta({ description: 'Default 1.' }),
  budget: experimentBudget.optional(),
});

export const listResultsQuery = pageQuery;

export const compareQuery = z.strictObject({
  baseline: z
    .string()
    .min(1)
    .max(100)
    .meta({ description: 'The experiment to compare against (yours, same dataset).' }),
  fail_on: compareOptionsSchema.shape.fail_on,
  regression_threshold: queryFraction(
    "A regression is a scorer's mean dropping by more than this (absolute, 0–1). Default 0.05.",
  ),
  tolerance: queryFraction('An item score moving by at most this much (absolute, 0–1) is unchanged. Default 0.'),
});
