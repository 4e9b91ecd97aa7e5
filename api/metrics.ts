/**
 * The Stepwise metrics the API counts (prom-client), each at exactly one place: HTTP requests (rate, errors by their
 * stable error code — rate-limit and budget rejections among them — and latency, by route pattern), runs started,
 * idempotent replays, status reads and the Temporal checks they made. Labels never hold a user, run or request id: the
 * route is the router's pattern (`/api/v1/workflows/runs/:id/status`), unrouted requests are `unmatched`.
 */
import type { Registry } from 'prom-client';
import { declareMetrics } from '../shared/metrics/declare';
import type { RunKind } from '../shared/metrics/run-kind';
import { runsStartedCounter } from '../shared/metrics/runs-started';

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface ApiMetrics {
  /** `code` is the X-Error-Code of an error answer, or `none`. */
  httpRequest(method: string, route: string, status: number, code: string, seconds: number): void;
  runStarted(kind: RunKind): void;
  idempotentReplay(): void;
  /** One status read; `checked` when the read asked Temporal about a quiet or overdue run (it writes nothing). */
  statusRead(checked: boolean): void;
}

export function createApiMetrics(registry: Registry): ApiMetrics {
  const { counter, histogram } = declareMetrics(registry);
  const requests = counter(
    'stepwise_http_requests_total',
    'API requests by method, route pattern, status and error code (none on success)',
    ['method', 'route', 'status', 'code'],
  );
  const latency = histogram(
    'stepwise_http_request_duration_seconds',
    'API request latency by method and route pattern (streams: until the stream ends)',
    ['method', 'route'],
    HTTP_BUCKETS,
  );
  const runStarted = runsStartedCounter(registry);
  const replays = counter(
    'stepwise_idempotent_replays_total',
    'Run starts answered from an earlier request with the same Idempotency-Key',
  );
  const statusReads = counter('stepwise_status_reads_total', 'Run status reads');
  const checks = counter(
    'stepwise_status_read_checks_total',
    'Status reads that asked Temporal about a quiet or overdue run',
  );
  // The labelled series of each request kind, looked up by one string instead of prom-client hashing the labels on
  // every request; bounded like the series themselves (methods × route patterns × statuses × error codes).
  const series = new Map<string, { count: { inc(): void }; latency: { observe(v: number): void } }>();
  return {
    httpRequest(method, route, status, code, seconds) {
      const key = `${method} ${route} ${status} ${code}`;
      let s = series.get(key);
      if (!s) {
        s = { count: requests.labels(method, route, String(status), code), latency: latency.labels(method, route) };
        series.set(key, s);
      }
      s.count.inc();
      s.latency.observe(seconds);
    },
    runStarted,
    idempotentReplay: () => replays.inc(),
    statusRead(checked) {
      statusReads.inc();
      if (checked) checks.inc();
    },
  };
}
