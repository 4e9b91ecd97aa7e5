import { MongoBulkWriteError, type WriteError } from 'mongodb';

/** MongoDB's duplicate-key error (code 11000): a unique index refused the write, so the document is already there. */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/**
 * The indexes of an unordered bulk write's operations that hit a duplicate key, when that is all that went wrong;
 * undefined for any other failure (the caller rethrows it).
 */
export function duplicateKeyIndexes(err: unknown): Set<number> | undefined {
  if (!(err instanceof MongoBulkWriteError)) return undefined;
  const errors = ([] as WriteError[]).concat(err.writeErrors);
  if (errors.length === 0 || errors.some((e) => e.code !== 11000)) return undefined;
  return new Set(errors.map((e) => e.index));
}
