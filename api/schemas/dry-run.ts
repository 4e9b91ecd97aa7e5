/**
 * `?dry_run=true` on the writes of definitions (workflows, templates): every check runs, nothing is stored, and the
 * answer is 200 with what would have been stored. `workflows apply --dry-run` / `agents apply --dry-run` of the CLI
 * validate a file this way, with the server's own rules rather than a second copy of them.
 */
import { z } from 'zod';

export const dryRunQuery = z.strictObject({
  dry_run: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: '`true`: check only; nothing is written and the answer is 200 with what would be stored.' }),
});

/** True when the request asks for a dry run. */
export const isDryRun = (query: z.infer<typeof dryRunQuery>): boolean => query.dry_run === 'true';

/**
 * A created definition's dry-run answer leaves the id out: nothing was stored, so there is no id anyone could use
 * (a client — or a contract fuzzer following the answer like a link — would only meet a 404 with it).
 */
export function withoutId<T extends { id: string }>(view: T): Omit<T, 'id'> {
  const { id: _id, ...rest } = view;
  return rest;
}
