/** MongoDB's duplicate-key error (code 11000): a unique index refused the write, so the document is already there. */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}
