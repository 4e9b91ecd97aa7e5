/**
 * Handing a recorded run's start to a worker (WORKER_START_URL). A worker that makes the start itself, on the
 * connection its workflow polling uses, gets the run's first workflow task back in Temporal's answer (eager workflow
 * start) instead of waiting for Temporal to dispatch it through the task queue: 16-18 ms on the dev server, a third of
 * a short run. The worker only starts a run that is recorded, queued and not yet in Temporal
 * (temporal/run-starts.ts), so the request names the run and nothing else.
 *
 * Anything but the worker's answer with the execution's run id (no worker listening, a timeout, a refusal) leaves the
 * start to the API, which makes it as it would without a worker to hand it to; a start both made is one execution
 * (idempotent by workflow id). After a failure to reach the worker, the API starts runs itself for a while before it
 * tries again, so a worker that is away costs one timeout, not one per start.
 */
import http from 'node:http';
import type { Logger } from 'pino';

/** A worker answers at once or not at all: past this, the API starts the run itself. */
const HAND_OFF_TIMEOUT_MS = 1_000;
/** After the worker could not be reached, starts skip it for this long. */
const PAUSE_AFTER_FAILURE_MS = 10_000;

export class WorkerStarts {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  private pausedUntil = 0;

  constructor(
    private readonly baseUrl: URL,
    private readonly logger: Logger,
  ) {}

  /** The started execution's Temporal run id, or null when the API is to start the run itself. */
  async start(runId: string): Promise<string | null> {
    if (Date.now() < this.pausedUntil) return null;
    try {
      const answer = await this.post(new URL(`runs/${encodeURIComponent(runId)}/start`, this.baseUrl));
      if (answer.status === 200) {
        const data = (JSON.parse(answer.body) as { data?: { temporal_run_id?: unknown } }).data;
        if (typeof data?.temporal_run_id === 'string') return data.temporal_run_id;
      }
      // A refusal (the run is not queued, Temporal refused the worker): the API's own start says what is wrong.
      this.logger.debug({ run_id: runId, status: answer.status }, 'the worker did not start the run');
      return null;
    } catch (err) {
      this.pausedUntil = Date.now() + PAUSE_AFTER_FAILURE_MS;
      this.logger.warn({ run_id: runId, err }, 'could not hand the start to the worker; the API starts runs itself');
      return null;
    }
  }

  private post(url: URL): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent: this.agent, timeout: HAND_OFF_TIMEOUT_MS }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${HAND_OFF_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end();
    });
  }
}
