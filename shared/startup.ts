/** Start-up helper shared by the API and the worker: wait for a dependency instead of crashing on a slow start. */
import type { Logger } from 'pino';

export async function retryUntil(
  what: string,
  fn: () => Promise<unknown>,
  logger: Logger,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await fn();
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`${what}: still failing after ${timeoutMs / 1000} s: ${(err as Error).message}`);
      if (attempt === 1 || attempt % 10 === 0) logger.warn({ err: (err as Error).message }, `${what}: waiting`);
      await new Promise((r) => setTimeout(r, Math.min(2_000, 200 * attempt)));
    }
  }
}
