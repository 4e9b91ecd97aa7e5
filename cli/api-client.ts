/**
 * The CLI's client of the HTTP API (`runs …`, `approvals …`, `workflows …`, `agents …`): every request goes through the
 * typed client generated from the OpenAPI document (client/, `npm run generate:client`), so a path, parameter or
 * body the API does not document is a compile error. It acts with the user's API key, unwraps the `{data, error}`
 * envelope, checks the fields the commands use against cli/api-types.ts (the server answering may be another
 * version than the one the types were generated from) and turns every failure into a CliError a person can act on.
 */
import { z } from 'zod';
import { createStepwiseClient, type paths, type StepwiseClient } from '../client';
import { CliError } from './errors';
import {
  approvalDecided,
  approvalItem,
  cancelRequested,
  hookItem,
  runSearchItem,
  runStarted,
  runStatusBody,
  scheduleItem,
  templateItem,
  workflowItem,
  type ApprovalDecided,
  type ApprovalItem,
  type CancelRequested,
  type HookItem,
  type RunSearchItem,
  type RunStarted,
  type RunStatusBody,
  type ScheduleItem,
  type TemplateItem,
  type WorkflowItem,
} from './api-types';

/** An error answer of the API: the server's message, its status and its stable code (`X-Error-Code`). */
export class ApiRequestError extends CliError {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
    /** The envelope's `error` as the server wrote it (apply maps its field names to a file's lines). */
    readonly serverMessage: string | null = null,
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

/** GET /api/v1/agents filters, named as in the query string. */
export interface TemplateFilter {
  step_type?: 'agent' | 'action';
  tag?: string;
}

/** A schedule's create body, as the document states it. */
export type ScheduleBody = NonNullable<
  paths['/api/v1/workflows/{id}/schedules']['post']['requestBody']
>['content']['application/json'];

/** What every openapi-fetch call resolves to, whatever the operation. */
type Answer = { data?: unknown; error?: unknown; response: Response };

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
  /** The generated typed client; commands that need an operation not wrapped below use it directly. */
  readonly http: StepwiseClient;

  constructor(private readonly opts: ApiClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.http = createStepwiseClient({
      baseUrl: this.base,
      apiKey: opts.apiKey,
      fetch: (request) => this.reach(fetch(request)),
    });
  }

  url(path: string, query: Query = {}): URL {
    const url = new URL(`${this.base}/api/v1${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, v);
    }
    return url;
  }

  /** A network failure becomes a CliError naming the URL the person can correct. */
  private async reach(pending: Promise<Response>, signal?: AbortSignal): Promise<Response> {
    try {
      return await pending;
    } catch (err) {
      if (signal?.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach the Stepwise API at ${this.base} (${cause?.code ?? cause?.message ?? (err as Error).message}); ` +
          'is it running? Point --url or STEPWISE_URL at it',
      );
    }
  }

  /**
   * fetch with the key, for the event stream only: openapi-fetch reads whole bodies, an SSE stream never ends
   * (cli/sse.ts reads it as it comes).
   */
  async send(method: string, url: URL, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}) {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.opts.apiKey}`, ...init.headers };
    return this.reach(fetch(url, { method, headers, signal: init.signal }), init.signal);
  }

  /** The CliError for a non-2xx answer whose body has not been read (the event stream). */
  async failure(res: Response, method: string, url: URL): Promise<ApiRequestError> {
    const text = await res.text().catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: described as text below.
    }
    return this.refusal(res, body, `${method} ${url.pathname}`);
  }

  /** The CliError for a non-2xx answer: the envelope's message and code, and what to do about it. */
  refusal(res: Response, body: unknown, what: string): ApiRequestError {
    const parsed = envelope.safeParse(body);
    const message = parsed.success ? parsed.data.error : null;
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
    const code = res.headers.get('X-Error-Code');
    const said = message ?? `unexpected answer to ${what}: ${text.slice(0, 200) || '(empty body)'}`;
    const tag = `HTTP ${res.status}${code ? ` ${code}` : ''}`;
    switch (res.status) {
      case 401:
        return new ApiRequestError(
          // The URL, because a key refused by another stack than the one meant (a dev stack on moved ports, the
          // default port answered by something else) looks exactly like a bad key.
          `the API at ${this.base} refused the key (${tag}): ${said}. Check --api-key / STEPWISE_API_KEY, and ` +
            '--url / STEPWISE_URL if this is not the stack you meant (npm run dev prints the export lines for its ' +
            'URL and key); an administrator makes keys with: npm run cli -- keys create <user>',
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
        return new ApiRequestError(`${said} (${tag})`, res.status, code, message);
    }
  }

  /**
   * The `data` of an answer of the generated client, checked against `schema`; a refusal becomes a CliError.
   * `what` (`GET /runs`) names the request in messages.
   */
  async unwrap<S extends z.ZodType>(
    what: string,
    pending: Promise<Answer>,
    schema: S,
  ): Promise<{ data: z.infer<S>; res: Response }> {
    let answer: Answer;
    try {
      answer = await pending;
    } catch (err) {
      if (err instanceof CliError) throw err;
      // openapi-fetch parses every 2xx body as JSON.
      throw new CliError(`unexpected answer to ${what}: not JSON`);
    }
    const res = answer.response;
    if (!res.ok) throw this.refusal(res, answer.error, what);
    const parsed = envelope.safeParse(answer.data);
    const data = parsed.success ? schema.safeParse(parsed.data.data) : null;
    if (!data?.success) {
      const why = data ? describeIssues(data.error) : 'no {data, error} envelope';
      throw new CliError(`unexpected answer to ${what}: ${why} (is the CLI older than the API?)`);
    }
    return { data: data.data, res };
  }

  /** Every item of a paged list up to `max`, following the `Link` cursors; `page` asks for one page. */
  async list<S extends z.ZodType>(
    what: string,
    item: S,
    page: (q: { limit: number; cursor?: string }) => Promise<Answer>,
    max: number,
  ): Promise<z.infer<S>[]> {
    const items: z.infer<S>[] = [];
    let cursor: string | undefined;
    do {
      const limit = Math.min(PAGE_MAX, max - items.length);
      const { data, res } = await this.unwrap(what, page({ limit, ...(cursor ? { cursor } : {}) }), z.array(item));
      items.push(...data);
      cursor = nextCursor(res.headers.get('Link')) ?? undefined;
    } while (cursor !== undefined && items.length < max);
    return items.slice(0, max);
  }

  searchRuns(filter: RunSearchFilter, max: number): Promise<RunSearchItem[]> {
    const query = { ...filter, status: filter.status?.join(',') };
    return this.list(
      'GET /runs',
      runSearchItem,
      (page) => this.http.GET('/api/v1/runs', { params: { query: { ...query, ...page } } }),
      max,
    );
  }

  async runStatus(runId: string): Promise<RunStatusBody> {
    const answer = this.http.GET('/api/v1/workflows/runs/{runId}/status', { params: { path: { runId } } });
    return (await this.unwrap('GET …/status', answer, runStatusBody)).data;
  }

  /** POST /workflows/:id/run with `{input}`; the same Idempotency-Key and input start one run. */
  async startRun(
    workflowId: string,
    opts: { input?: Record<string, unknown>; idempotencyKey?: string },
  ): Promise<RunStarted> {
    const answer = this.http.POST('/api/v1/workflows/{id}/run', {
      params: {
        path: { id: workflowId },
        header: opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : {},
      },
      // The server checks the input against the workflow's input schema.
      body: opts.input === undefined ? {} : { input: opts.input },
    });
    return (await this.unwrap('POST …/run', answer, runStarted)).data;
  }

  async cancelRun(runId: string): Promise<CancelRequested> {
    const answer = this.http.POST('/api/v1/workflows/runs/{runId}/cancel', { params: { path: { runId } } });
    return (await this.unwrap('POST …/cancel', answer, cancelRequested)).data;
  }

  workflows(max: number): Promise<WorkflowItem[]> {
    return this.list(
      'GET /workflows',
      workflowItem,
      (page) => this.http.GET('/api/v1/workflows', { params: { query: page } }),
      max,
    );
  }

  /** System templates and the caller's own, oldest first (system ones first). */
  templates(filter: TemplateFilter, max: number): Promise<TemplateItem[]> {
    return this.list(
      'GET /agents',
      templateItem,
      (page) => this.http.GET('/api/v1/agents', { params: { query: { ...filter, ...page } } }),
      max,
    );
  }

  async rerun(
    runId: string,
    opts: { fromStep?: string; idempotencyKey?: string; models?: Record<string, string> },
  ): Promise<RunStarted> {
    const models = Object.entries(opts.models ?? {});
    const answer = this.http.POST('/api/v1/workflows/runs/{runId}/rerun', {
      params: {
        path: { runId },
        header: opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : {},
      },
      body: {
        ...(opts.fromStep === undefined ? {} : { from_step: opts.fromStep }),
        ...(models.length ? { overrides: Object.fromEntries(models.map(([step, model]) => [step, { model }])) } : {}),
      },
    });
    return (await this.unwrap('POST …/rerun', answer, runStarted)).data;
  }

  approvals(max: number): Promise<ApprovalItem[]> {
    return this.list(
      'GET /approvals',
      approvalItem,
      (page) => this.http.GET('/api/v1/approvals', { params: { query: page } }),
      max,
    );
  }

  async decide(runId: string, stepId: string, approved: boolean, comment?: string): Promise<ApprovalDecided> {
    const answer = this.http.POST('/api/v1/workflows/runs/{runId}/approve', {
      params: { path: { runId } },
      body: { step_id: stepId, approved, ...(comment === undefined ? {} : { comment }) },
    });
    return (await this.unwrap('POST …/approve', answer, approvalDecided)).data;
  }

  hooks(workflowId: string, max: number): Promise<HookItem[]> {
    return this.list(
      'GET …/hooks',
      hookItem,
      (page) => this.http.GET('/api/v1/workflows/{id}/hooks', { params: { path: { id: workflowId }, query: page } }),
      max,
    );
  }

  async createHook(workflowId: string, body: { name?: string; signed?: boolean }): Promise<HookItem> {
    const answer = this.http.POST('/api/v1/workflows/{id}/hooks', { params: { path: { id: workflowId } }, body });
    return (await this.unwrap('POST …/hooks', answer, hookItem)).data;
  }

  /** `PATCH` (`{enabled}`), `POST …/rotate-secret` or `DELETE` on one hook. */
  async changeHook(
    workflowId: string,
    hookId: string,
    change: { enabled: boolean } | 'rotate' | 'delete',
  ): Promise<HookItem | null> {
    const path = { id: workflowId, hookId };
    if (change === 'delete') {
      await this.unwrap(
        'DELETE …/hooks/…',
        this.http.DELETE('/api/v1/workflows/{id}/hooks/{hookId}', { params: { path } }),
        z.unknown(),
      );
      return null;
    }
    if (change === 'rotate') {
      const answer = this.http.POST('/api/v1/workflows/{id}/hooks/{hookId}/rotate-secret', { params: { path } });
      return (await this.unwrap('POST …/rotate-secret', answer, hookItem)).data;
    }
    const answer = this.http.PATCH('/api/v1/workflows/{id}/hooks/{hookId}', { params: { path }, body: change });
    return (await this.unwrap('PATCH …/hooks/…', answer, hookItem)).data;
  }

  schedules(workflowId: string, max: number): Promise<ScheduleItem[]> {
    return this.list(
      'GET …/schedules',
      scheduleItem,
      (page) =>
        this.http.GET('/api/v1/workflows/{id}/schedules', { params: { path: { id: workflowId }, query: page } }),
      max,
    );
  }

  async createSchedule(workflowId: string, body: ScheduleBody): Promise<ScheduleItem> {
    const answer = this.http.POST('/api/v1/workflows/{id}/schedules', { params: { path: { id: workflowId } }, body });
    return (await this.unwrap('POST …/schedules', answer, scheduleItem)).data;
  }

  async schedule(scheduleId: string): Promise<ScheduleItem> {
    const answer = this.http.GET('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } });
    return (await this.unwrap('GET /schedules/…', answer, scheduleItem)).data;
  }

  /** `POST /schedules/:id/<action>`: pause and resume answer with the schedule, trigger and backfill with 202. */
  async scheduleAction(
    scheduleId: string,
    action: 'pause' | 'resume' | 'trigger' | 'backfill',
    body: { note?: string } | { start_at: string; end_at: string } = {},
  ): Promise<void> {
    const params = { path: { scheduleId } };
    const answer =
      action === 'backfill'
        ? this.http.POST('/api/v1/schedules/{scheduleId}/backfill', {
            params,
            body: body as { start_at: string; end_at: string },
          })
        : action === 'trigger'
          ? this.http.POST('/api/v1/schedules/{scheduleId}/trigger', { params })
          : this.http.POST(`/api/v1/schedules/{scheduleId}/${action}`, { params, body: body as { note?: string } });
    await this.unwrap(`POST /schedules/…/${action}`, answer, z.unknown());
  }

  async deleteSchedule(scheduleId: string): Promise<void> {
    const answer = this.http.DELETE('/api/v1/schedules/{scheduleId}', { params: { path: { scheduleId } } });
    await this.unwrap('DELETE /schedules/…', answer, z.unknown());
  }

  /** The URL of a run's event stream (cli/sse.ts opens it with `send`). */
  eventsUrl(runId: string): URL {
    return this.url(`/workflows/runs/${encodeURIComponent(runId)}/events`);
  }
}
