/**
 * The console's only way to the server: same-origin calls to /api/v1 with the session's key. Bodies are the envelope
 * `{data, error}`; a failed call throws ApiError with the API's own message and `X-Error-Code`. A 401 anywhere means the
 * key expired or was revoked: the key is dropped and the app returns to the sign-in page.
 */
import type { ApiData, Schemas } from '../../client';
import { currentKey, signOut } from './session';

export { ACTIVE_RUN_STATUSES, RUN_STATUSES, type RunStatus } from '../../client/values';

// The answers the console reads, named: the client generated from the OpenAPI document (client/), types only.
export type Template = Schemas['AgentTemplate'];
export type ToolInfo = Schemas['Tool'];
export type ActionInfo = ApiData<'/api/v1/agents/actions', 'get'>[number];
export type Workflow = Schemas['Workflow'];
export type WorkflowStep = Workflow['steps'][number];
export type RunView = Schemas['RunStatus'];
export type RunStep = RunView['steps'][number];
export type StepExecution = Schemas['StepExecution'];
export type ExecutionCounts = NonNullable<RunStep['executions']>['counts'];
export type RunSearchItem = Schemas['RunSearchItem'];
export type RunEvent = Schemas['RunEvent'];
export type Approval = Schemas['Approval'];
export type Usage = Schemas['Usage'];
export type UsageRow = Schemas['UsageRow'];
export type Dataset = Schemas['Dataset'];
export type DatasetItem = Schemas['DatasetItem'];
export type DatasetVersion = Schemas['DatasetVersion'];
export type Experiment = Schemas['Experiment'];
export type ExperimentDetail = Schemas['ExperimentDetail'];
export type ExperimentResult = Schemas['ExperimentResult'];
export type Comparison = Schemas['ExperimentComparison'];
export type ItemComparison = Comparison['items'][number];
export type StartedRun = ApiData<'/api/v1/workflows/{id}/run', 'post', 202>;
export type Transcript = ApiData<'/api/v1/workflows/runs/{runId}/steps/{stepId}/transcript', 'get'>;
export type TranscriptEntry = Transcript['entries'][number];
export type Thread = Schemas['Thread'];
export type ThreadMessage = Schemas['ThreadMessage'];
export type AcceptedMessage = Schemas['AcceptedMessage'];

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Page<T> {
  items: T[];
  /** The next page's URL from the `Link: <…>; rel="next"` header, as a same-origin path. */
  next: string | null;
}

/** A path under /api/v1 (with its query) or a URL the API handed out (Link headers): always sent to this origin. */
function sameOrigin(pathOrUrl: string): string {
  if (pathOrUrl.startsWith('/')) return pathOrUrl.startsWith('/api/') ? pathOrUrl : `/api/v1${pathOrUrl}`;
  const url = new URL(pathOrUrl, window.location.origin);
  return `${url.pathname}${url.search}`;
}

export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const key = currentKey();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : extra;
}

/** Throws the API's error for a non-2xx response (and signs out on 401). */
export async function failure(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { error?: unknown };
    if (typeof body.error === 'string' && body.error !== '') message = body.error;
  } catch {
    // Not JSON (a proxy's page): keep the status line.
  }
  if (res.status === 401) signOut(`Signed out: ${message}`);
  return new ApiError(message, res.status, res.headers.get('X-Error-Code'));
}

async function call(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  const headers = authHeaders(body === undefined ? {} : { 'Content-Type': 'application/json' });
  const res = await fetch(sameOrigin(path), {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
    signal: signal ?? null,
    cache: 'no-store',
  });
  if (!res.ok) throw await failure(res);
  return res;
}

async function data<T>(res: Response): Promise<T> {
  const body = (await res.json()) as { data: T };
  return body.data;
}

export async function get<T>(path: string, signal?: AbortSignal): Promise<T> {
  return data<T>(await call('GET', path, undefined, signal));
}

export async function post<T>(path: string, body: unknown): Promise<T> {
  return data<T>(await call('POST', path, body));
}

const NEXT_LINK = /<([^>]+)>\s*;\s*rel="?next"?/;

export async function getPage<T>(path: string, signal?: AbortSignal): Promise<Page<T>> {
  const res = await call('GET', path, undefined, signal);
  const match = NEXT_LINK.exec(res.headers.get('Link') ?? '');
  return { items: await data<T[]>(res), next: match?.[1] ? sameOrigin(match[1]) : null };
}

/** The message to show for anything a call threw. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
