/** Real expression evaluators for tests (separate processes, as in the worker), with small limits when asked. */
import { createExpressionEvaluator, type ExpressionEvaluator } from '../../temporal/expressions/evaluator';
import { DEFAULT_LIMITS, type EvaluatorOptions } from '../../temporal/expressions/limits';

export function testEvaluator(options: Partial<EvaluatorOptions> = {}): ExpressionEvaluator {
  return createExpressionEvaluator({
    processes: 1,
    memoryMb: 128,
    // Generous: the suite shares two cores, and a queued call here is a test's own doing.
    queueTimeoutMs: 60_000,
    startTimeoutMs: 60_000,
    ...options,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
  });
}

/** For contexts of tests that evaluate no expressions: any use fails loudly instead of spawning processes. */
export const noExpressions: ExpressionEvaluator = {
  evaluate: () => Promise.reject(new Error('this test context has no expression evaluator: pass `expressions`')),
  close: () => Promise.resolve(),
};
