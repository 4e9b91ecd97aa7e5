/** The few Stepwise API calls the benchmark makes, over real HTTP with the bench user's key. */
export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; data: T }> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${this.key}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as { data: T; error: string | null };
    if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status}: ${json.error}`);
    return { status: res.status, data: json.data };
  }

  /** One page of a list endpoint and the path of the next one (from its `Link: <…>; rel="next"` header), if any. */
  async page<T>(path: string): Promise<{ data: T[]; next: string | null }> {
    const res = await fetch(`${this.baseUrl}${path}`, { headers: { Authorization: `Bearer ${this.key}` } });
    const json = (await res.json()) as { data: T[]; error: string | null };
    if (res.status >= 400) throw new Error(`GET ${path} → ${res.status}: ${json.error}`);
    const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
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
}
