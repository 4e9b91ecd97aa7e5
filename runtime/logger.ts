/** Structured JSON logs; credentials and keys are redacted wherever they appear in a logged object. */
import pino, { type Logger } from 'pino';

export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
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
