/** SSRF-guarded HTTP client (implementation follows). */
import { NonRetryableError } from '../failures';

export interface GuardedFetchOptions {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  /** HTTP_ALLOWED_HOSTS: `host` or `host:port` entries that may resolve to otherwise refused addresses. */
  allowedHosts: readonly string[];
  signal?: AbortSignal;
}

export interface GuardedResponse {
  status: number;
  /** The URL of the last hop. */
  url: string;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  redirects: number;
}

export async function guardedFetch(options: GuardedFetchOptions): Promise<GuardedResponse> {
  throw new NonRetryableError('not_supported', `guardedFetch(${options.url}) is not implemented yet`);
}
