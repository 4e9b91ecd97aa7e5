/** Returns its input with the worker's identity: proves an activity ran on a live worker. */
export async function echo(message: string): Promise<string> {
  return `echo: ${message}`;
}
