/**
 * The `jsonata` scorer wired as the worker will wire it: the domain's score() with the worker's out-of-process
 * evaluator passed in, and the evaluator's retryable failures marked transient. An expression that runs away is
 * stopped at the time limit and recorded as "cannot score"; an evaluator that is unavailable makes score() reject,
 * so the activity is retried instead of recording a 0.
 */
import { compileScorer } from '../../../domain/evals/compile';
import type { ScoringSample } from '../../../domain/evals/sample';
import { score, type ScoringDeps } from '../../../domain/evals/score';
import type { ExpressionEvaluator } from '../../../temporal/expressions/evaluator';
import { DEFAULT_LIMITS } from '../../../temporal/expressions/limits';
import { RetryableError } from '../../../temporal/failures';
import { testEvaluator } from '../../helpers/expressions';

const sample: ScoringSample = {
  input: { question: 'Capital of France?' },
  output: { city: 'Paris', sources: ['https://example.com/paris'] },
  expected: { city: 'Paris' },
  trajectory: [{ name: 'search', arguments: { q: 'capital of France' } }],
  usage: { input_tokens: 120, output_tokens: 30, llm_calls: 2 },
  latency_ms: 900,
};

function deps(ev: ExpressionEvaluator): ScoringDeps {
  return {
    evaluateExpression: (expression, data) => ev.evaluate(expression, data),
    isTransient: (err) => err instanceof RetryableError,
  };
}

describe('the jsonata scorer on the worker’s evaluator', () => {
  const timeoutMs = 1000;
  let ev: ExpressionEvaluator;
  beforeAll(() => {
    ev = testEvaluator({ limits: { ...DEFAULT_LIMITS, timeoutMs } });
  });
  afterAll(() => ev.close());

  it('scores from the output, the expected value, the trajectory and the usage (regexes on RE2)', async () => {
    const run = (expression: string) => score(compileScorer({ kind: 'jsonata', expression }), sample, deps(ev));
    expect(await run('output.city = expected.city')).toMatchObject({ score: 1, pass: true });
    expect(await run('$count(trajectory[name = "search"]) = 1 and usage.llm_calls <= 2')).toMatchObject({ pass: true });
    expect(await run('$count(output.sources[$contains($, /paris$/i)]) / $count(output.sources)')).toMatchObject({
      score: 1,
    });
    expect((await run('$count(input)')).reason).toBe('the expression returned 1 (≥ 1)');
  });

  it('a runaway expression is stopped at the time limit and recorded as cannot score', async () => {
    // One built-in call JSONata cannot interrupt (see the evaluator's own tests): only killing the process ends it.
    const scorer = compileScorer({ kind: 'jsonata', expression: '$count($match($pad("", 200000, "a"), /a*b|a/)) > 0' });
    expect(await score(scorer, sample, deps(ev))).toEqual({
      name: 'jsonata',
      score: 0,
      pass: false,
      reason: `cannot score: the expression failed: expression: took longer than the time limit (${timeoutMs} ms)`,
    });
    // The pool answers the next item.
    expect((await score(compileScorer({ kind: 'jsonata', expression: 'true' }), sample, deps(ev))).pass).toBe(true);
  });

  it('an evaluator that is unavailable makes score() reject (retryably), not record a 0', async () => {
    const closed = testEvaluator();
    await closed.close();
    const scorer = compileScorer({ kind: 'jsonata', expression: 'true' });
    await expect(score(scorer, sample, deps(closed))).rejects.toBeInstanceOf(RetryableError);
  });
});
