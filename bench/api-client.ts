/**
 * The few Stepwise API calls the benchmark makes, over real HTTP with the bench user's key: node:http on kept
 * connections. Not fetch: its client (undici) took 0.3-0.6 ms more per request than node:http against the same local
 * server here, the harness's own cost, which B1's few milliseconds would count as the service's.
 */
import http from 'node:http';

interface Answer<T> {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: { data: T; error: string | null };
}

export class ApiClient {
  private readonly agent = new http.Agent({ keepAlive: true });

  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> {
    const res = await this.request<T>(method, path, body);
    if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status}: ${res.json.error}`);
    return { status: res.status, data: res.json.data };
  }

  /** One page of a list endpoint and the path of the next one (from its `Link: <…>; rel="next"` header), if any. */
  async page<T>(path: string): Promise<{ data: T[]; next: string | null }> {
    const res = await this.request<T[]>('GET', path);
    const json = res.json;
    if (res.status >= 400) throw new Error(`GET ${path} → ${res.status}: ${json.error}`);
    const link = /<([^>]+)>;\s*rel="next"/.exec([res.headers.link ?? ''].flat().join(', '))?.[1];
    const next = link === undefined ? null : new URL(link);
    return { data: json.data, next: next ? `${next.pathname}${next.search}` : null };
  }

  /** The system template implementing `action_type`. */
  async systemTemplateId(actionType: string): Promise<string> {
    const { data } = await this.call<{ id: string; system: boolean; action_type: string | null }[]>(
      'GET',
      '/api/v1/agents?step_type=action&limit=200',
    );
    const found = data.find((t) => t.system && t.action_type === actionType);
    if (!found) throw new Error(`no system template for ${actionType}`);
    return found.id;
  }

  /** A workflow of `n` trivial transform steps (each reshapes the previous output), as in the bare arm. */
  async createTransformWorkflow(n: number, transformTemplateId: string): Promise<string> {
    const steps = Array.from({ length: n }, (_, i) => ({
      id: `s${i + 1}`,
      template_id: transformTemplateId,
      config: { expression: '{"value": data}', data: i === 0 ? '{{input}}' : `{{steps.s${i}.output}}` },
    }));
    const { data } = await this.call<{ id: string }>('POST', '/api/v1/workflows', { name: `bench ${n} steps`, steps });
    return data.id;
  }

  /** A workflow of `n` `http_request` steps, each a GET of `url` (as the bare arm's request activities). */
  async createHttpWorkflow(n: number, httpTemplateId: string, url: string): Promise<string> {
    const steps = Array.from({ length: n }, (_, i) => ({
      id: `s${i + 1}`,
      template_id: httpTemplateId,
      config: { url },
    }));
    const { data } = await this.call<{ id: string }>('POST', '/api/v1/workflows', { name: `bench ${n} http`, steps });
    return data.id;
  }

  async startRun(workflowId: string, input: Record<string, unknown>): Promise<string> {
    const { data } = await this.call<{ run_id: string }>('POST', `/api/v1/workflows/${workflowId}/run`, { input });
    return data.run_id;
  }

  async status(runId: string, waitSeconds?: number, until?: 'end'): Promise<{ status: string }> {
    const q = waitSeconds === undefined ? '' : `?wait=${waitSeconds}${until ? `&until=${until}` : ''}`;
    return (await this.call<{ status: string }>('GET', `/api/v1/workflows/runs/${runId}/status${q}`)).data;
  }

  /**
   * Waits on the status endpoint until the run is terminal (long polls that answer at the end, as the bare arm's
   * result() does); throws unless it completed.
   */
  async waitForCompletion(runId: string): Promise<void> {
    for (;;) {
      const { status } = await this.status(runId, 10, 'end');
      if (status === 'completed') return;
      if (['failed', 'cancelled', 'timed_out'].includes(status)) throw new Error(`run ${runId} ended ${status}`);
    }
  }

  /** Ends the kept connections (the bench's API processes are stopped after it). */
  close(): void {
    this.agent.destroy();
  }

  private request<T>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request(
        `${this.baseUrl}${path}`,
        {
          method,
          agent: this.agent,
          headers: {
            Authorization: `Bearer ${this.key}`,
            ...(text === undefined ? {} : { 'Content-Type': 'application/json' }),
          },
        },
        (res) => {
          let raw = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (raw += chunk));
          res.on('end', () => {
            try {
              const json = JSON.parse(raw) as Answer<T>['json'];
              resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
            } catch (err) {
              reject(err instanceof Error ? err : new Error(String(err)));
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  }
}
