/**
 * Structured JSON logs; credentials and keys are redacted wherever they appear in a logged object. With tracing on,
 * every line logged inside a span carries its `trace_id` and `span_id` (a mixin, installed only then).
 */
import pino, { type Logger } from 'pino';
import { activeTraceIds } from './tracing';

export function createLogger(level: string, name: string, opts: { traceIds?: boolean } = {}): Logger {
  return pino({
    name,
    level,
    ...(opts.traceIds ? { mixin: () => activeTraceIds() ?? {} } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        '*.authorization',
        '*.api_key',
        '*.apiKey',
        '*.password',
        '*.token',
        'key',
      ],
      censor: '[redacted]',
    },
  });
}
