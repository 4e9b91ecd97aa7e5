/**
 * An experiment's results as the comparison, the CI gate and the JUnit writer read them: one entry per dataset item
 * and repetition, with its scores, usage, latency and — for replayed items — each step's output.
 */
import { z } from 'zod';
import { jsonValueSchema } from '../json-value';
import { sampleUsageSchema, scoreResultSchema } from './sample';

export const itemResultSchema = z.object({
  item_id: z.string().min(1),
  /** 0-based; an experiment with `repetitions: 3` has 0, 1 and 2 for every item. */
  repetition: z.int().min(0),
  scores: z.array(scoreResultSchema),
  usage: sampleUsageSchema,
  latency_ms: z.number().min(0),
  /** The item's run failed (or could not start): what went wrong. Its scorers may still have scored it 0. */
  error: z.string().optional(),
  /** Each step's output, for items run in replay mode: the comparison reports which steps' outputs changed. */
  steps: z.array(z.object({ step_id: z.string(), output: jsonValueSchema })).optional(),
  /** For items run in replay mode: which steps were replayed and which executed, against the recorded run. */
  replay: z
    .object({
      source_run_id: z.string(),
      steps: z.array(
        z.object({
          step_id: z.string(),
          how: z.enum(['replayed', 'executed', 'skipped']),
          changed: z.boolean().nullable(),
          recorded: jsonValueSchema.optional(),
          output: jsonValueSchema.optional(),
        }),
      ),
    })
    .optional(),
});

export const experimentResultsSchema = z.object({
  experiment_id: z.string().min(1),
  /** A human name (the JUnit suite is called by it); defaults to the id. */
  name: z.string().optional(),
  /** When the experiment started (ISO 8601), for the JUnit timestamp. */
  started_at: z.string().optional(),
  items: z.array(itemResultSchema),
});

export type ItemResult = z.infer<typeof itemResultSchema>;
export type ExperimentResults = z.infer<typeof experimentResultsSchema>;
