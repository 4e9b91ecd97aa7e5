/** The bare arm's activity: returns its input wrapped, like a trivial transform step. */
export async function step(value: unknown): Promise<unknown> {
  return { value };
}
