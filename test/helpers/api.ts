/** Assertions and fixtures shared by the HTTP tests. */
import type { Response } from 'supertest';

/** Every response, success or error, is exactly {data, error} with one of them null. */
export function expectEnvelope(res: Response, ok: boolean): void {
  const body = res.body as unknown;
  expect(body).toBeInstanceOf(Object);
  expect(Object.keys(body as object).sort()).toEqual(['data', 'error']);
  const { data, error } = body as { data: unknown; error: unknown };
  if (ok) {
    expect(error).toBeNull();
    expect(data).not.toBeNull();
  } else {
    expect(data).toBeNull();
    expect(typeof error).toBe('string');
    expect((error as string).length).toBeGreaterThan(0);
  }
}

/** An error response with this status whose message contains every fragment (field names, mostly). */
export function expectError(res: Response, status: number, ...fragments: string[]): void {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  expectEnvelope(res, false);
  for (const f of fragments) expect((res.body as { error: string }).error).toContain(f);
}

/** Template names are unique per owner: each body the helpers build has a name of its own. */
let bodies = 0;

/** A valid agent template body (named `Helper <n>`); override any field. */
export function agentBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: `Helper ${++bodies}`, default_prompt: 'You help.', ...overrides };
}

/** A valid action template body (send_email with references). */
export function actionBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `Notify ${++bodies}`,
    default_prompt: 'Send the summary.',
    step_type: 'action',
    action_type: 'send_email',
    config: { to: 'ops@example.com', subject: 'Summary', text: '{{steps.summarize.output}}' },
    ...overrides,
  };
}
