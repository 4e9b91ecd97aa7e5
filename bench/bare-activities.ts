import { createLlmProvider } from '../temporal/llm/provider';

/** The bare arm's activity: returns its input wrapped, like a trivial transform step. */
export async function step(value: unknown): Promise<unknown> {
  return { value };
}

/** B10's bare activity: the same GET of the local sink a Stepwise `http_request` item makes. */
export async function get(url: string): Promise<unknown> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

/**
 * B2/B3's bare activity: the request a Stepwise `http_request` step with only a URL makes — a GET carrying an
 * Idempotency-Key — and its JSON body read.
 */
export async function request(url: string, idempotencyKey: string): Promise<unknown> {
  const res = await fetch(url, { headers: { 'Idempotency-Key': idempotencyKey } });
  return { status: res.status, body: await res.json() };
}

/** B6's bare activity: one model call through the same provider adapter, against the mock LLM at `baseUrl`. */
export async function modelCall(baseUrl: string, model: string, apiKey: string): Promise<string> {
  const provider = createLlmProvider({ OPENAI_API_KEY: apiKey, OPENAI_BASE_URL: baseUrl }, model);
  const result = await provider.generate({
    system: 'Answer briefly.',
    messages: [{ role: 'user', text: 'go' }],
    tools: [],
  });
  return result.text ?? '';
}
