/**
 * A server's own credentials out of what the server says. An MCP server receives its token with every request, and a
 * careless or hostile one may quote it back — in an error message, a tool description, a tool result. Whatever the
 * server supplies goes on to the model, the transcript, the step's status, the run's events, Temporal's history and
 * the logs, all readable by whoever holds the API key; the credentials must not (decision 0400). So every value of the
 * server's auth is replaced in everything a session returns or throws, before anyone stores or shows it.
 */

/** What stands where a credential value was. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are not looked for: they would match ordinary text (a header such as `X-Tenant: eu`), and
 * a value that short is no secret to keep.
 */
export const REDACT_MIN_CHARS = 4;

/** The strings to remove for these credential values: each as sent, JSON-escaped and URL-encoded, longest first. */
export function secretForms(values: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < REDACT_MIN_CHARS) continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
    forms.add(encodeURIComponent(value));
  }
  // Longest first: a form that contains another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

export function redactText(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
  return out;
}

/** `value` with every string in it (object keys too) redacted; the same value when there is nothing to remove. */
export function redactDeep<T>(value: T, forms: readonly string[]): T {
  if (forms.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, forms);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactText(k, forms), walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * The error with the credentials taken out of its message, stack and causes, in place: its class and fields (an
 * HTTP status, a JSON-RPC code) still classify it (./errors.ts).
 */
export function redactError(err: unknown, forms: readonly string[]): unknown {
  if (forms.length === 0) return err;
  const seen = new Set<unknown>();
  for (let e: unknown = err; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    e.message = redactText(e.message, forms);
    if (e.stack !== undefined) e.stack = redactText(e.stack, forms);
    const data = (e as { data?: unknown }).data;
    if (data !== undefined) (e as { data?: unknown }).data = redactDeep(data, forms);
  }
  return err;
}
