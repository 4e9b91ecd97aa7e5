/** The bare arm's activity: returns its input wrapped, like a trivial transform step. */
export async function step(value: unknown): Promise<unknown> {
  return { value };
}

/** B10's bare activity: the same GET of the local sink a Stepwise `http_request` item makes. */
export async function get(url: string): Promise<unknown> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) };
}
