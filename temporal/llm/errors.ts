/**
 * Provider failures, classified once from the AI SDK's structured error fields (status code, response headers,
 * `isRetryable`) — never from message text. The activity layer turns an LlmError into a Temporal ApplicationFailure.
 */
import { APICallError } from 'ai';
import type { LlmProviderName } from '../../shared/llm-providers';

export type LlmErrorKind =
  | 'not_configured'
  | 'invalid_model'
  | 'auth'
  | 'bad_request'
  | 'not_found'
  | 'rate_limited'
  | 'server'
  | 'timeout'
  | 'connection'
  | 'invalid_response';

const RETRYABLE: Record<LlmErrorKind, boolean> = {
  not_configured: false,
  invalid_model: false,
  auth: false,
  bad_request: false,
  not_found: false,
  rate_limited: true,
  server: true,
  timeout: true,
  connection: true,
  invalid_response: true,
};

export class LlmError extends Error {
  override readonly name = 'LlmError';
  readonly retryable: boolean;
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly details: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.retryable = RETRYABLE[kind];
  }
}

/** Largest Retry-After honoured; a longer one falls back to Temporal's backoff instead of parking the step for hours. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** Reads `retry-after-ms` / `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  let ms: number | undefined;
  const msHeader = lower['retry-after-ms'];
  if (msHeader !== undefined && Number.isFinite(Number(msHeader))) ms = Number(msHeader);
  const header = lower['retry-after'];
  if (ms === undefined && header !== undefined) {
    ms = Number.isFinite(Number(header)) ? Number(header) * 1000 : Date.parse(header) - now;
  }
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

const PROVIDER_LABEL: Record<LlmProviderName, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  compat: 'The LLM endpoint',
};
/** How messages name the provider: "OpenAI", "Anthropic", "The LLM endpoint". */
export function providerLabel(provider: LlmProviderName): string {
  return PROVIDER_LABEL[provider];
}

const KEY_VARIABLE: Record<LlmProviderName, string> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  compat: 'LLM_API_KEY',
};

/** Socket-level failure codes (Node and undici) anywhere in the cause chain: the request never got an HTTP answer. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

// The SDK wraps these in a retryable APICallError only when the error is its own realm's TypeError; code running in
// another realm (a jest VM context, a bundled worker) sees the raw fetch error, so the cause chain is checked too.
function networkErrorCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current = err;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function shorten(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Maps anything a provider call threw to an LlmError. `secrets` (the configured keys) are cut out of every message,
 * since some providers echo (parts of) a rejected key back.
 */
export function classifyLlmError(err: unknown, provider: LlmProviderName, secrets: string[] = []): LlmError {
  if (err instanceof LlmError) return err;
  const label = PROVIDER_LABEL[provider];
  const redact = (text: string) =>
    secrets.filter((s) => s.length >= 4).reduce((t, s) => t.split(s).join('[redacted]'), text);

  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    const detail = shorten(redact(err.message));
    if (status === undefined) {
      // No HTTP answer at all: the SDK marks refused/reset connections retryable.
      return new LlmError(
        err.isRetryable ? 'connection' : 'invalid_response',
        `${label} could not be reached: ${detail}`,
      );
    }
    if (status >= 200 && status < 300) {
      // The answer began (a streamed call) and broke off while being read: a dropped connection or a cut body.
      const code = networkErrorCode(err);
      return code !== undefined
        ? new LlmError('connection', `${label} broke off its answer (${code})`, { status })
        : new LlmError('invalid_response', `${label} broke off its answer: ${detail}`, { status });
    }
    if (status === 401 || status === 403) {
      return new LlmError(
        'auth',
        `${label} rejected the credentials (HTTP ${status}): check ${KEY_VARIABLE[provider]}. ${detail}`,
        { status },
      );
    }
    if (status === 404) {
      return new LlmError(
        'not_found',
        `${label} answered 404: the model or endpoint does not exist (check the template's model and the base URL). ${detail}`,
        { status },
      );
    }
    if (status === 429) {
      return new LlmError('rate_limited', `${label} rate limited the call (HTTP 429). ${detail}`, {
        status,
        retryAfterMs: retryAfterMs(err.responseHeaders),
      });
    }
    if (status >= 500 || err.isRetryable) {
      return new LlmError('server', `${label} failed with HTTP ${status}. ${detail}`, {
        status,
        retryAfterMs: retryAfterMs(err.responseHeaders),
      });
    }
    return new LlmError('bad_request', `${label} refused the request (HTTP ${status}). ${detail}`, { status });
  }
  if (networkErrorCode(err) !== undefined) {
    return new LlmError('connection', `${label} could not be reached (${networkErrorCode(err)})`);
  }
  // Unparseable or unexpected response bodies (the SDK's type-validation / JSON-parse errors): a flaky proxy or an
  // overloaded server more often than a permanent problem, so retried within the step's bounded attempts.
  const message = err instanceof Error ? err.message : String(err);
  return new LlmError('invalid_response', `${label} returned an unexpected response: ${shorten(redact(message))}`);
}
