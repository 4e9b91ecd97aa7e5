/**
 * The CLI's client of the HTTP API (`runs …`, `approvals …`): acts with the user's API key, unwraps the
 * `{data, error}` envelope, checks answers against cli/api-types.ts and turns every failure into a CliError a person
 * can act on (the server's message and code, plus what to do about a 401 or a 404).
 */
import { z } from 'zod';
import { CliError } from './errors';
import {
  approvalDecided,
  approvalItem,
  hookItem,
  runSearchItem,
  runStarted,
  runStatusBody,
  scheduleItem,
  type ApprovalDecided,
  type ApprovalItem,
  type HookItem,
  type RunSearchItem,
  type RunStarted,
  type RunStatusBody,
  type ScheduleItem,
} from './api-types';

/** An error answer of the API: the server's message, its status and its stable code (`X-Error-Code`). */
export class ApiRequestError extends CliError {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

export interface ApiClientOptions {
  /** `http://host:port`, without `/api/v1`. */
  baseUrl: string;
  apiKey: string;
}

/** GET /api/v1/runs filters, named as in the query string (spec "Run search"). */
export interface RunSearchFilter {
  status?: string[];
  workflow_id?: string;
  created_after?: string;
  created_before?: string;
  q?: string;
}

type Query = Record<string, string | string[] | undefined>;

const PAGE_MAX = 200;
const envelope = z.object({ data: z.unknown(), error: z.string().nullable() });

/** The `cursor` of a `Link: <…>; rel="next"` header: the next page is asked of our base URL, whatever host it names. */
export function nextCursor(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (!match?.[1]) continue;
    try {
      return new URL(match[1]).searchParams.get('cursor');
    } catch {
      return null;
    }
  }
  return null;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
    .join('; ');
}

export class ApiClient {
  private readonly base: string;

  constructor(private readonly opts: ApiClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
  }

  url(path: string, query: Query = {}): URL {
    const url = new URL(`${this.base}/api/v1${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, v);
    }
    return url;
  }

  /** fetch with the key; a network failure becomes a CliError naming the URL the person can correct. */
  async send(
    method: string,
    url: URL,
    init: { headers?: Record<string, string>; body?: unknown; signal?: AbortSignal } = {},
  ) {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.opts.apiKey}`, ...init.headers };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      return await fetch(url, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: init.signal,
      });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach the Stepwise API at ${this.base} (${cause?.code ?? cause?.message ?? (err as Error).message}); ` +
          'is it running? Point --url or STEPWISE_URL at it',
      );
    }
  }

  /** The CliError for a non-2xx answer: the envelope's message and code, and what to do about it. */
  async failure(res: Response, method: string, url: URL): Promise<ApiRequestError> {
    const text = await res.text().catch(() => '');
    let message: string | null = null;
    try {
      message = envelope.parse(JSON.parse(text)).error;
    } catch {
      // Not our envelope (a proxy's page, an older server): say what came back instead.
    }
    const code = res.headers.get('X-Error-Code');
    const said = message ?? `unexpected answer to ${method} ${url.pathname}: ${text.slice(0, 200) || '(empty body)'}`;
    const tag = `HTTP ${res.status}${code ? ` ${code}` : ''}`;
    switch (res.status) {
      case 401:
        return new ApiRequestError(
          `the API refused the key (${tag}): ${said}. Check --api-key / STEPWISE_API_KEY; ` +
            'an administrator makes keys with: npm run cli -- keys create <user>',
          401,
          code,
        );
      case 404:
        return new ApiRequestError(
          `${said} (${tag}): the id is unknown or belongs to another user; \`runs list\` shows your runs`,
          404,
          code,
        );
      case 429:
        return new ApiRequestError(
          `${said} (${tag}); try again in ${res.headers.get('Retry-After') ?? 'a few'} s`,
          429,
          code,
        );
      default:
        return new ApiRequestError(`${said} (${tag})`, res.status, code);
    }
  }

  private async call<S extends z.ZodType>(
    method: string,
    url: URL,
    schema: S,
    init: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<{ data: z.infer<S>; res: Response }> {
    const res = await this.send(method, url, init);
    if (!res.ok) throw await this.failure(res, method, url);
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new CliError(`unexpected answer to ${method} ${url.pathname} (HTTP ${res.status}): not JSON`);
    }
    const parsed = envelope.safeParse(body);
    const data = parsed.success ? schema.safeParse(parsed.data.data) : null;
    if (!data?.success) {
      const why = data ? describeIssues(data.error) : 'no {data, error} envelope';
      throw new CliError(`unexpected answer to ${method} ${url.pathname}: ${why} (is the CLI older than the API?)`);
    }
    return { data: data.data, res };
  }

  /** Up to `max` items of a paged list, following the `Link` cursors. */
  async list<S extends z.ZodType>(path: string, item: S, query: Query, max: number): Promise<z.infer<S>[]> {
    const items: z.infer<S>[] = [];
    let cursor: string | undefined;
    do {
      const limit = String(Math.min(PAGE_MAX, max - items.length));
      const { data, res } = await this.call('GET', this.url(path, { ...query, limit, cursor }), z.array(item));
      items.push(...data);
      cursor = nextCursor(res.headers.get('Link')) ?? undefined;
    } while (cursor !== undefined && items.length < max);
    return items.slice(0, max);
  }

  searchRuns(filter: RunSearchFilter, max: number): Promise<RunSearchItem[]> {
    return this.list('/runs', runSearchItem, { ...filter, status: filter.status?.join(',') }, max);
  }

  async runStatus(runId: string): Promise<RunStatusBody> {
    const path = `/workflows/runs/${encodeURIComponent(runId)}/status`;
    return (await this.call('GET', this.url(path), runStatusBody)).data;
  }

  async rerun(runId: string, opts: { fromStep?: string; idempotencyKey?: string }): Promise<RunStarted> {
    const path = `/workflows/runs/${encodeURIComponent(runId)}/rerun`;
    const headers: Record<string, string> = opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : {};
    const body = opts.fromStep === undefined ? {} : { from_step: opts.fromStep };
    return (await this.call('POST', this.url(path), runStarted, { headers, body })).data;
  }

  approvals(max: number): Promise<ApprovalItem[]> {
    return this.list('/approvals', approvalItem, {}, max);
  }

  async decide(runId: string, stepId: string, approved: boolean, comment?: string): Promise<ApprovalDecided> {
    const path = `/workflows/runs/${encodeURIComponent(runId)}/approve`;
    const body = { step_id: stepId, approved, ...(comment === undefined ? {} : { comment }) };
    return (await this.call('POST', this.url(path), approvalDecided, { body })).data;
  }

  hooks(workflowId: string, max: number): Promise<HookItem[]> {
    return this.list(`/workflows/${encodeURIComponent(workflowId)}/hooks`, hookItem, {}, max);
  }

  async createHook(workflowId: string, body: { name?: string; signed?: boolean }): Promise<HookItem> {
    const path = `/workflows/${encodeURIComponent(workflowId)}/hooks`;
    return (await this.call('POST', this.url(path), hookItem, { body })).data;
  }

  /** `PATCH` (`{enabled}`), `POST …/rotate-secret` or `DELETE` on one hook. */
  async changeHook(
    workflowId: string,
    hookId: string,
    change: { enabled: boolean } | 'rotate' | 'delete',
  ): Promise<HookItem | null> {
    const path = `/workflows/${encodeURIComponent(workflowId)}/hooks/${encodeURIComponent(hookId)}`;
    if (change === 'delete') {
      await this.call('DELETE', this.url(path), z.unknown());
      return null;
    }
    if (change === 'rotate') return (await this.call('POST', this.url(`${path}/rotate-secret`), hookItem)).data;
    return (await this.call('PATCH', this.url(path), hookItem, { body: change })).data;
  }

  schedules(workflowId: string, max: number): Promise<ScheduleItem[]> {
    return this.list(`/workflows/${encodeURIComponent(workflowId)}/schedules`, scheduleItem, {}, max);
  }

  async createSchedule(workflowId: string, body: Record<string, unknown>): Promise<ScheduleItem> {
    const path = `/workflows/${encodeURIComponent(workflowId)}/schedules`;
    return (await this.call('POST', this.url(path), scheduleItem, { body })).data;
  }

  async schedule(scheduleId: string): Promise<ScheduleItem> {
    return (await this.call('GET', this.url(`/schedules/${encodeURIComponent(scheduleId)}`), scheduleItem)).data;
  }

  /** `POST /schedules/:id/<action>`: pause and resume answer with the schedule, trigger and backfill with 202. */
  async scheduleAction(
    scheduleId: string,
    action: 'pause' | 'resume' | 'trigger' | 'backfill',
    body: Record<string, unknown> = {},
  ): Promise<void> {
    await this.call('POST', this.url(`/schedules/${encodeURIComponent(scheduleId)}/${action}`), z.unknown(), { body });
  }

  async deleteSchedule(scheduleId: string): Promise<void> {
    await this.call('DELETE', this.url(`/schedules/${encodeURIComponent(scheduleId)}`), z.unknown());
  }

  /** The URL of a run's event stream (cli/sse.ts opens it with `send`). */
  eventsUrl(runId: string): URL {
    return this.url(`/workflows/runs/${encodeURIComponent(runId)}/events`);
  }
}
