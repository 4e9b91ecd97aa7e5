/**
 * The CLI's client of the HTTP API (`runs …`, `approvals …`, `workflows …`, `agents …`): every request goes through the
 * typed client generated from the OpenAPI document (client/, `npm run generate:client`), so a path, parameter, body or
 * answer field the API does not document is a compile error. It acts with the user's API key, unwraps the
 * `{data, error}` envelope and turns every failure into a CliError a person can act on. Answers are not parsed again
 * with schemas of the CLI's own: the document is the contract (docs/decisions/0302-clients-on-the-generated-types.md).
 */
import { z } from 'zod';
import { createStepwiseClient, type paths, type Schemas, type StepwiseClient } from '../client';
import { CliError } from './errors';

/** The answers the CLI reads, named: the generated client's schemas. */
export type RunSearchItem = Schemas['RunSearchItem'];
export type RunStatusBody = Schemas['RunStatus'];
export type RunEvent = Schemas['RunEvent'];
export type TextDeltaEvent = Extract<RunEvent, { type: 'agent.text.delta' }>;
export type TextVoidEvent = Extract<RunEvent, { type: 'agent.text.void' }>;
export type HookItem = Schemas['Hook'];
export type ScheduleItem = Schemas['Schedule'];
export type McpServerItem = Schemas['McpServer'];
export type DatasetView = Schemas['Dataset'];
export type DatasetItem = Schemas['DatasetItem'];
export type { RunStatus } from '../client/values';

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

/** A schedule's create body, as the document states it. */
export type ScheduleBody = NonNullable<
  paths['/api/v1/workflows/{id}/schedules']['post']['requestBody']
>['content']['application/json'];

/** The `Idempotency-Key` header of a run start or rerun: the same key starts one run. */
export function idempotencyHeader(key: string | undefined): { 'Idempotency-Key'?: string } {
  return key ? { 'Idempotency-Key': key } : {};
}

/** What an openapi-fetch call resolves to: on success the envelope with `data` of type T. */
type Answer<T> = { data?: { data: T } | undefined; error?: unknown; response: Response };

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

export class ApiClient {
  private readonly base: string;
  /** The generated typed client: commands call its operations and pass the answers to `unwrap` or `list`. */
  readonly http: StepwiseClient;

  constructor(private readonly opts: ApiClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.http = createStepwiseClient({
      baseUrl: this.base,
      apiKey: opts.apiKey,
      fetch: (request) => this.reach(fetch(request)),
    });
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
   * The `data` of an answer of the generated client; a refusal becomes a CliError. Only the envelope is checked (an
   * answer without one is not the Stepwise API); `what` (`GET /runs`) names the request in messages.
   */
  async unwrap<T>(what: string, pending: Promise<Answer<T>>): Promise<{ data: T; res: Response }> {
    let answer: Answer<T>;
    try {
      answer = await pending;
    } catch (err) {
      if (err instanceof CliError) throw err;
      // openapi-fetch parses every 2xx body as JSON.
      throw new CliError(`unexpected answer to ${what}: not JSON`);
    }
    const res = answer.response;
    if (!res.ok) throw this.refusal(res, answer.error, what);
    if (!envelope.safeParse(answer.data).success) {
      throw new CliError(`unexpected answer to ${what}: no {data, error} envelope (is ${this.base} the Stepwise API?)`);
    }
    return { data: answer.data!.data, res };
  }

  /** Every item of a paged list up to `max`, following the `Link` cursors; `page` asks for one page. */
  async list<T>(
    what: string,
    page: (q: { limit: number; cursor?: string }) => Promise<Answer<T[]>>,
    max: number,
  ): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | undefined;
    do {
      const limit = Math.min(PAGE_MAX, max - items.length);
      const { data, res } = await this.unwrap(what, page({ limit, ...(cursor ? { cursor } : {}) }));
      items.push(...data);
      cursor = nextCursor(res.headers.get('Link')) ?? undefined;
    } while (cursor !== undefined && items.length < max);
    return items.slice(0, max);
  }

  async runStatus(runId: string): Promise<RunStatusBody> {
    const answer = this.http.GET('/api/v1/workflows/runs/{runId}/status', { params: { path: { runId } } });
    return (await this.unwrap('GET …/status', answer)).data;
  }

  /** The URL of a run's event stream (cli/sse.ts opens it with `send`). */
  eventsUrl(runId: string): URL {
    return new URL(`${this.base}/api/v1/workflows/runs/${encodeURIComponent(runId)}/events`);
  }

  /** The URL of a thread's event stream (every turn's run events, ids `<turn>.<seq>`). */
  threadEventsUrl(threadId: string): URL {
    return new URL(`${this.base}/api/v1/threads/${encodeURIComponent(threadId)}/events`);
  }
}
