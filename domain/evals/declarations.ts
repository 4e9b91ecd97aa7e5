/**
 * Scorer declarations: what a user writes in an experiment's `scorers` list. A zod discriminated union on `kind`, the
 * source of truth for the API schema and for the TypeScript types (`z.infer`). What zod cannot check (a pattern RE2
 * refuses, a JSONata syntax error, an invalid JSON Schema, a duplicate name) is checked by compileScorers (compile.ts).
 */
import { z } from 'zod';
import { MODEL_REF_MESSAGE, MODEL_REF_PATTERN } from '../agent';
import { jsonValueSchema } from '../json-value';
import { MAX_PATTERN_CHARS } from '../user-schema';

/** Most scorers in one list (each runs on every item and repetition). */
export const MAX_SCORERS = 20;
/** Most expected tool calls in a trajectory scorer (matching costs expected × actual). */
export const MAX_EXPECTED_CALLS = 100;
/** Longest JSONata expression of a scorer (the same bound as a `transform` step's). */
export const MAX_EXPRESSION_CHARS = 10_000;
/** Longest judge rubric. */
export const MAX_RUBRIC_CHARS = 10_000;

/** A scorer's name: how it is shown in results, compared across experiments and named in JUnit XML. */
export const scorerNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, _ . - (starting with a letter or digit)');

/**
 * A field of a value: `$` (the whole value), `answer.city`, `items[0].name`, `$.a["odd key"]`. Parsed by
 * parseFieldPath (field-path.ts); compileScorers refuses one that does not parse.
 */
const fieldPath = z.string().min(1).max(500);

const common = {
  name: scorerNameSchema.optional().describe('Unique in the list; defaults to the kind (then kind_2, kind_3 …)'),
};

/** Text normalisation shared by `exact` (on strings) and `contains`. */
const textOptions = {
  ignore_case: z.boolean().default(false),
  whitespace: z
    .enum(['exact', 'trim', 'collapse'])
    .default('trim')
    .describe('exact: as is; trim: ends trimmed; collapse: trimmed and every run of whitespace made one space'),
};

export const exactScorerSchema = z.strictObject({
  kind: z.literal('exact'),
  ...common,
  path: fieldPath.optional().describe('Compare this field of the output instead of the whole output'),
  expected_path: fieldPath
    .optional()
    .describe("The field of the item's expected value to compare with; defaults to `path` (use `$` for all of it)"),
  value: jsonValueSchema.optional().describe("A fixed expected value, used instead of the item's expected"),
  ...textOptions,
});

export const containsScorerSchema = z.strictObject({
  kind: z.literal('contains'),
  ...common,
  value: z.union([z.string().min(1).max(10_000), z.array(z.string().min(1).max(10_000)).min(1).max(100)]),
  mode: z.enum(['all', 'any']).default('all'),
  path: fieldPath.optional().describe('Search this field of the output (a non-string is searched as JSON text)'),
  ...textOptions,
});

export const regexScorerSchema = z.strictObject({
  kind: z.literal('regex'),
  ...common,
  pattern: z.string().min(1).max(MAX_PATTERN_CHARS).describe('RE2 syntax: no backreferences or lookarounds'),
  ignore_case: z.boolean().default(false),
  negate: z.boolean().default(false).describe('Pass when the pattern does NOT match'),
  path: fieldPath.optional(),
});

export const jsonSchemaScorerSchema = z.strictObject({
  kind: z.literal('json_schema'),
  ...common,
  schema: z.record(z.string(), jsonValueSchema).describe('JSON Schema 2020-12 the output must satisfy'),
  path: fieldPath.optional(),
});

export const jsonataScorerSchema = z.strictObject({
  kind: z.literal('jsonata'),
  ...common,
  expression: z
    .string()
    .min(1)
    .max(MAX_EXPRESSION_CHARS)
    .describe('Reads {input, output, expected, trajectory, usage, latency_ms}; returns a boolean or a number 0–1'),
  pass_threshold: z.number().min(0).max(1).default(1).describe('A numeric result passes at or above this'),
});

const expectedCallSchema = z.strictObject({
  name: z.string().min(1).max(200),
  arguments: z
    .record(z.string(), jsonValueSchema)
    .optional()
    .describe('When given, the call must carry these arguments (see `arguments_match`)'),
});

export const trajectoryScorerSchema = z.strictObject({
  kind: z.literal('trajectory'),
  ...common,
  expected: z.array(expectedCallSchema).min(1).max(MAX_EXPECTED_CALLS),
  match: z
    .enum(['ordered', 'unordered', 'subset'])
    .default('ordered')
    .describe(
      'ordered: these calls, in this order, nothing else; unordered: these calls in any order, nothing else; ' +
        'subset: at least these calls, in any order, others allowed',
    ),
  arguments_match: z
    .enum(['exact', 'partial'])
    .default('partial')
    .describe('exact: the arguments are equal; partial: every expected argument is present and equal'),
  pass_threshold: z.number().min(0).max(1).default(1),
});

export const costScorerSchema = z
  .strictObject({
    kind: z.literal('cost'),
    ...common,
    max_tokens: z.int().min(0).optional().describe('Input + output tokens'),
    max_model_calls: z.int().min(0).optional(),
    max_cost: z.number().min(0).optional().describe('In the price table’s currency'),
  })
  .refine((c) => c.max_tokens !== undefined || c.max_model_calls !== undefined || c.max_cost !== undefined, {
    message: 'set at least one of max_tokens, max_model_calls, max_cost',
  });

export const latencyScorerSchema = z.strictObject({
  kind: z.literal('latency'),
  ...common,
  max_ms: z.int().min(0),
});

export const llmJudgeScorerSchema = z.strictObject({
  kind: z.literal('llm_judge'),
  ...common,
  rubric: z.string().min(1).max(MAX_RUBRIC_CHARS).describe('What a good answer is; the judge scores 0–1 against it'),
  model: z.string().min(3).max(200).regex(MODEL_REF_PATTERN, MODEL_REF_MESSAGE),
  pass_threshold: z.number().min(0).max(1).default(0.5),
});

/** One scorer as written (defaults not yet applied: see ScorerConfig for the parsed form). */
export const scorerConfigSchema = z.discriminatedUnion('kind', [
  exactScorerSchema,
  containsScorerSchema,
  regexScorerSchema,
  jsonSchemaScorerSchema,
  jsonataScorerSchema,
  trajectoryScorerSchema,
  costScorerSchema,
  latencyScorerSchema,
  llmJudgeScorerSchema,
]);

export const scorerListSchema = z.array(scorerConfigSchema).min(1).max(MAX_SCORERS);

/** A scorer after parsing (defaults applied). */
export type ScorerConfig = z.infer<typeof scorerConfigSchema>;
/** A scorer as a client writes it (defaults optional). */
export type ScorerConfigInput = z.input<typeof scorerConfigSchema>;
export type ScorerKind = ScorerConfig['kind'];
export type ScorerOf<K extends ScorerKind> = Extract<ScorerConfig, { kind: K }>;
