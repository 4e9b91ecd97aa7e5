/** The limits an expression evaluation runs under, and how the worker's configuration sets them. */
import type { Config } from '../../config';

/** Per-evaluation limits (a caller may tighten or loosen any of them for one call). */
export interface EvaluationLimits {
  /** Wall-clock budget; past it the evaluator process is killed, whatever the expression is doing. */
  timeoutMs: number;
  /** Maximum JSONata evaluation depth (runaway recursion). */
  maxDepth: number;
  /** Maximum length of a sequence or range JSONata builds (`[1..1e9]`). */
  maxSequence: number;
  /** Maximum length of a string `$pad`, `$join` or `$string` may build: checked before it is allocated. */
  maxStringChars: number;
  /** Maximum size of the result as JSON text. */
  maxResultChars: number;
}

export interface EvaluatorOptions {
  /** Evaluator processes kept for reuse; evaluations beyond that wait in a queue. */
  processes: number;
  /** Heap limit of each evaluator process (`--max-old-space-size`). */
  memoryMb: number;
  /** Longest wait in the queue before an evaluation fails (retryably: the next attempt may find a free one). */
  queueTimeoutMs: number;
  /** Longest start of an evaluator process (a loaded machine starts node slowly; a broken one never does). */
  startTimeoutMs: number;
  limits: EvaluationLimits;
}

/**
 * 16 Mi characters: above the 8 MiB step-output limit (db/blobs.ts), so an oversized but legitimate output still
 * fails there with `output_too_large`, and far below what would strain the evaluator's heap.
 */
const MAX_CHARS = 16 * 1024 * 1024;

export const DEFAULT_LIMITS: EvaluationLimits = {
  timeoutMs: 2000,
  maxDepth: 300,
  maxSequence: 100_000,
  maxStringChars: MAX_CHARS,
  maxResultChars: MAX_CHARS,
};

export function evaluatorOptions(config: Config): EvaluatorOptions {
  return {
    processes: config.EXPRESSION_WORKERS,
    memoryMb: config.EXPRESSION_MEMORY_MB,
    queueTimeoutMs: config.EXPRESSION_QUEUE_TIMEOUT_MS,
    startTimeoutMs: 30_000,
    limits: { ...DEFAULT_LIMITS, timeoutMs: config.EXPRESSION_TIMEOUT_MS },
  };
}
