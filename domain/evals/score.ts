/**
 * Scoring one sample with one compiled scorer: an exhaustive switch over the kinds. Never throws for the sample's sake —
 * a scorer that cannot score (no expected value, an expression that failed, a judge that answered nonsense) answers
 * score 0, not passed, and says why, so one bad item never loses the scores of the others. Only a failure the
 * caller marks transient (deps.isTransient: the infrastructure's, not the sample's) propagates, to be retried.
 *
 * Two kinds need what the domain cannot do: `jsonata` evaluates in the worker's bounded evaluator
 * (temporal/expressions: a separate process, killed at its time limit) and `llm_judge` calls a model (an activity).
 * Both are passed in as `deps`, so this file stays pure and the same code scores in an activity or a test.
 */
import type { JsonValue } from '../json';
import type { CompiledScorer } from './compile';
import { judgeRequest, judgeResult, type JudgeRequest } from './judge';
import { cannotScore, fmt, show, truncate, verdict } from './result';
import type { ScoreResult, ScoringSample } from './sample';
import { scoreContains, scoreExact, scoreJsonSchema, scoreRegex } from './text-scorers';
import { scoreTrajectory } from './trajectory';

type Of<K extends CompiledScorer['kind']> = Extract<CompiledScorer, { kind: K }>;

/** What scoring needs from the layers above. Absent ones make their scorers answer "cannot score". */
export interface ScoringDeps {
  /**
   * The worker's bounded JSONata evaluator (ExpressionEvaluator.evaluate); rejects on a limit or a runtime error.
   * A scorer's result is a boolean or a number, so the wiring may bind a small `maxResultChars`.
   */
  evaluateExpression?: (expression: string, data: JsonValue) => Promise<JsonValue>;
  /** Sends a judge request to its model; resolves to the raw answer (text or a parsed object). */
  judge?: (request: JudgeRequest) => Promise<unknown>;
  /**
   * Failures of the two above that are the infrastructure's, not the sample's (no free evaluator, a provider's 503):
   * those propagate, so the calling activity is retried instead of recording a 0 that says nothing about the run.
   * Without it, every failure is recorded as "cannot score".
   */
  isTransient?: (err: unknown) => boolean;
}

/**
 * Scores `sample` with `scorer`: resolves with a score in [0, 1] — rejecting only with a failure `deps.isTransient`
 * calls transient.
 */
export async function score(
  scorer: CompiledScorer,
  sample: ScoringSample,
  deps: ScoringDeps = {},
): Promise<ScoreResult> {
  try {
    switch (scorer.kind) {
      case 'exact':
        return scoreExact(scorer, sample);
      case 'contains':
        return scoreContains(scorer, sample);
      case 'regex':
        return scoreRegex(scorer, sample);
      case 'json_schema':
        return scoreJsonSchema(scorer, sample);
      case 'trajectory':
        return scoreTrajectory(scorer, sample);
      case 'cost':
        return scoreCost(scorer, sample);
      case 'latency':
        return scoreLatency(scorer, sample);
      case 'jsonata':
        return await scoreJsonata(scorer, sample, deps);
      case 'llm_judge':
        if (!deps.judge) return cannotScore(scorer.name, 'no judge is available here');
        return judgeResult(scorer, await deps.judge(judgeRequest(scorer, sample)));
    }
  } catch (err) {
    if (deps.isTransient?.(err)) throw err;
    return cannotScore(scorer.name, truncate(err instanceof Error ? err.message : String(err), 200));
  }
}

/** Every scorer on one sample, in the list's order (rejects as score() does). */
export async function scoreAll(
  scorers: CompiledScorer[],
  sample: ScoringSample,
  deps: ScoringDeps = {},
): Promise<ScoreResult[]> {
  const results: ScoreResult[] = [];
  for (const scorer of scorers) results.push(await score(scorer, sample, deps));
  return results;
}

function scoreCost(scorer: Of<'cost'>, sample: ScoringSample): ScoreResult {
  const { name, config } = scorer;
  const { usage } = sample;
  const tokens = usage.input_tokens + usage.output_tokens;
  const checks: [string, number, number | undefined][] = [
    ['tokens', tokens, config.max_tokens],
    ['model calls', usage.llm_calls, config.max_model_calls],
  ];
  if (config.max_cost !== undefined) {
    if (usage.cost === undefined) return cannotScore(name, 'the run has no cost (no price covers its models)');
    checks.push(['cost', usage.cost, config.max_cost]);
  }
  const over: string[] = [];
  const within: string[] = [];
  for (const [what, value, max] of checks) {
    if (max === undefined) continue;
    (value > max ? over : within).push(`${what} ${fmtNumber(value)} ${value > max ? '>' : '≤'} ${fmtNumber(max)}`);
  }
  if (over.length > 0) return verdict(name, 0, false, `over the limit: ${over.join(', ')}`);
  return verdict(name, 1, true, `within the limits: ${within.join(', ')}`);
}

function fmtNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toPrecision(4).replace(/\.?0+$/, '');
}

function scoreLatency(scorer: Of<'latency'>, sample: ScoringSample): ScoreResult {
  const { name, config } = scorer;
  const ms = Math.round(sample.latency_ms);
  if (sample.latency_ms > config.max_ms) return verdict(name, 0, false, `took ${ms} ms > ${config.max_ms} ms`);
  return verdict(name, 1, true, `took ${ms} ms ≤ ${config.max_ms} ms`);
}

async function scoreJsonata(scorer: Of<'jsonata'>, sample: ScoringSample, deps: ScoringDeps): Promise<ScoreResult> {
  const { name, config } = scorer;
  if (!deps.evaluateExpression) return cannotScore(name, 'no expression evaluator is available here');
  const data: JsonValue = {
    input: sample.input,
    output: sample.output,
    ...(sample.expected !== undefined ? { expected: sample.expected } : {}),
    trajectory: sample.trajectory.map((c) => ({
      name: c.name,
      arguments: c.arguments,
      ...(c.result !== undefined ? { result: c.result } : {}),
    })),
    usage: { ...sample.usage },
    latency_ms: sample.latency_ms,
  };
  let result: JsonValue;
  try {
    result = await deps.evaluateExpression(config.expression, data);
  } catch (err) {
    if (deps.isTransient?.(err)) throw err;
    return cannotScore(
      name,
      `the expression failed: ${truncate(err instanceof Error ? err.message : String(err), 200)}`,
    );
  }
  return interpretExpressionResult(name, result, config.pass_threshold);
}

/** A JSONata scorer's result as a verdict: a boolean passes or fails; a number in [0, 1] is the score. */
export function interpretExpressionResult(name: string, result: JsonValue, threshold: number): ScoreResult {
  if (typeof result === 'boolean') {
    return verdict(name, result ? 1 : 0, result, `the expression returned ${String(result)}`);
  }
  if (typeof result === 'number' && Number.isFinite(result) && result >= 0 && result <= 1) {
    const pass = result >= threshold;
    return verdict(
      name,
      result,
      pass,
      `the expression returned ${fmt(result)} (${pass ? '≥' : '<'} ${fmt(threshold)})`,
    );
  }
  return cannotScore(name, `the expression returned ${show(result)}; it must return a boolean or a number from 0 to 1`);
}
