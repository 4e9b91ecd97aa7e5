/**
 * The worker's own small HTTP server (it serves no API): /livez (not failed), /readyz (polling), /metrics (Prometheus),
 * and POST /runs/<id>/start, the run starts the API hands over (./run-starts.ts). Answers use the API's {data, error}
 * envelope so one probe format fits both processes.
 */
import http from 'node:http';
import type { Worker } from '@temporalio/worker';
import type { Registry } from 'prom-client';
import type { StartRecordedRun } from './run-starts';

export interface WorkerHealthDeps {
  /** Only the state is read; a function so tests can drive it. */
  state: () => ReturnType<Worker['getState']>;
  metrics: Registry;
  /** Takes the starts the API hands over; without it, POST /runs/<id>/start is refused like any other POST. */
  startRun?: StartRecordedRun;
}

const START_PATH = /^\/runs\/([^/]+)\/start$/;

export function createWorkerHealthServer(deps: WorkerHealthDeps): http.Server {
  return http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const state = deps.state();
    const url = new URL(req.url ?? '/', 'http://worker');
    const startOf = START_PATH.exec(url.pathname);
    if (startOf && deps.startRun) {
      if (req.method !== 'POST') return send(405, { data: null, error: `method ${req.method} not allowed` });
      // Only a running worker polls: a start it took could not be given its first workflow task.
      if (state !== 'RUNNING') return send(503, { data: null, error: `worker state ${state}` });
      req.resume();
      // Not decoded: a run id is letters, digits, "_" and "-", and anything else is no run (./run-starts.ts).
      deps.startRun(startOf[1]!).then(
        (answer) => send(answer.status, answer.body),
        () => send(500, { data: null, error: 'could not start the run' }),
      );
      return;
    }
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
