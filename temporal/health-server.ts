/**
 * The worker's own small HTTP server (it serves no API, and takes no commands: it is unauthenticated): GET /livez
 * (not failed), /readyz (polling), /metrics (Prometheus). Answers use the API's {data, error} envelope so one probe
 * format fits both processes.
 */
import http from 'node:http';
import type { Worker } from '@temporalio/worker';
import type { Registry } from 'prom-client';

export interface WorkerHealthDeps {
  /** Only the state is read; a function so tests can drive it. */
  state: () => ReturnType<Worker['getState']>;
  metrics: Registry;
}

export function createWorkerHealthServer(deps: WorkerHealthDeps): http.Server {
  return http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const state = deps.state();
    const url = new URL(req.url ?? '/', 'http://worker');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(405, { data: null, error: `method ${req.method} not allowed` });
    switch (url.pathname) {
      case '/livez':
        // Draining (STOPPING) is still alive: the orchestrator must not kill a worker finishing its activities.
        return state === 'FAILED'
          ? send(503, { data: null, error: 'worker failed' })
          : send(200, { data: { state }, error: null });
      case '/readyz':
        return state === 'RUNNING'
          ? send(200, { data: { state }, error: null })
          : send(503, { data: null, error: `worker state ${state}` });
      case '/metrics':
        deps.metrics.metrics().then(
          (text) => {
            res.writeHead(200, { 'Content-Type': deps.metrics.contentType });
            res.end(text);
          },
          () => send(500, { data: null, error: 'metrics unavailable' }),
        );
        return;
      default:
        return send(404, { data: null, error: `no route for ${req.method} ${url.pathname}` });
    }
  });
}
