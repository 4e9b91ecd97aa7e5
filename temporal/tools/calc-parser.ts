/** Recursive-descent arithmetic evaluator (implementation follows). */
import { NonRetryableError } from '../failures';

export function evaluateArithmetic(expression: string): number {
  throw new NonRetryableError('not_supported', `calculator is not implemented yet: ${expression}`);
}
