/**
 * How loudly the suite logs. By default only what nobody expected: the Temporal SDK's warnings and errors, one line
 * each. `STEPWISE_TEST_LOG_LEVEL=debug` (or info, trace) turns everything back on: the app's pino logs at that level
 * and the SDK's messages in full, stacks included.
 *
 * Many tests make activities and runs fail on purpose (a 404 from an HTTP action, a model that errors). The SDK
 * reports each as "Activity failed" / "Workflow failed" at WARN with the whole error and its stack; those are the
 * outcomes under test, not problems, so they are kept for debug level only.
 */
import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
import pino, { type Logger } from 'pino';

const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

/** STEPWISE_TEST_LOG_LEVEL, upper-cased for the SDK; `warn` when unset or not a level. */
export function testLogLevel(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const wanted = (env.STEPWISE_TEST_LOG_LEVEL ?? '').toUpperCase();
  return (LEVELS as readonly string[]).includes(wanted) ? (wanted as LogLevel) : 'WARN';
}

/** The SDK's reports of a run's own failure: what tests cause on purpose. */
const EXPECTED_FAILURES = new Set(['Activity failed', 'Workflow failed', 'Activity task failed']);

function errorText(meta: Record<string, unknown> | undefined): string {
  const error = meta?.error ?? meta?.err ?? meta?.failure;
  if (error instanceof Error) return `: ${error.name}: ${error.message}`;
  return error === undefined ? '' : `: ${typeof error === 'string' ? error : JSON.stringify(error)}`;
}

/** One line per entry (`[temporal WARN] message: error`) unless the level is debug or finer; then the SDK's default. */
export function testTemporalLogger(level: LogLevel = testLogLevel()): DefaultLogger {
  const verbose = level === 'TRACE' || level === 'DEBUG';
  const full = new DefaultLogger(level);
  return new DefaultLogger(level, (entry: LogEntry) => {
    if (verbose) {
      full.log(entry.level, entry.message, entry.meta);
      return;
    }
    if (EXPECTED_FAILURES.has(entry.message)) return;
    const workflow = typeof entry.meta?.workflowId === 'string' ? ` (${entry.meta.workflowId})` : '';
    process.stderr.write(`[temporal ${entry.level}] ${entry.message}${workflow}${errorText(entry.meta)}\n`);
  });
}

/** The app's pino logger in tests: silent unless STEPWISE_TEST_LOG_LEVEL asks for more. */
export function testAppLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  return pino({ level: env.STEPWISE_TEST_LOG_LEVEL ? testLogLevel(env).toLowerCase() : 'silent' });
}
