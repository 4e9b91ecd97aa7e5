/**
 * Large step outputs (over OUTPUT_INLINE_LIMIT_BYTES) live here and travel through Temporal as an OutputRef, so
 * workflow payloads and histories stay small. One blob per run + step: its id is derived from both, so a retried
 * attempt overwrites its own blob instead of leaving orphans.
 *
 * References cannot be forged into another tenant's data: a blob is read only for the run that wrote it (and so for
 * that run's owner), and a step output that merely contains a `stepwise_blob` key (a transform or a web page can
 * produce one) is itself stored as a blob, so the only references a run ever resolves are the ones storeOutput made.
 */
import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import type { JsonValue } from '../domain/json';
import { isOutputRef, OUTPUT_INLINE_LIMIT_BYTES, type OutputRef } from '../domain/run';
import type { PathSegment } from '../domain/render';
import { isSameOrChildRun } from '../domain/exec-id';

export interface BlobDoc {
  _id: string;
  run_id: string;
  step_id: string;
  bytes: number;
  /** JSON text: outputs may hold keys MongoDB refuses as field names. */
  json: string;
  created_at: Date;
}

/** Above this a step output is refused (a MongoDB document holds at most 16 MiB). */
export const OUTPUT_MAX_BYTES = 8 * 1024 * 1024;

export class OutputTooLargeError extends Error {
  readonly code = 'output_too_large';
  constructor(readonly bytes: number) {
    super(`step output is ${bytes} bytes; the limit is ${OUTPUT_MAX_BYTES} bytes`);
    this.name = 'OutputTooLargeError';
  }
}

export class BlobMissingError extends Error {
  readonly code = 'blob_missing';
  constructor(id: string) {
    super(`stored output ${id} is missing`);
    this.name = 'BlobMissingError';
  }
}

export function blobsCollection(db: Db) {
  return db.collection<BlobDoc>('blobs');
}

export function blobId(runId: string, stepId: string): string {
  return `blob_${createHash('sha256').update(`${runId}\0${stepId}`).digest('base64url').slice(0, 32)}`;
}

/** The key that marks a reference; user data holding it anywhere is stored by reference, never passed inline. */
const REF_KEY_JSON = '"stepwise_blob"';

/**
 * Returns the value itself when it is small and holds nothing that looks like a reference, else stores it and returns
 * its reference.
 */
export async function storeOutput(
  db: Db,
  runId: string,
  stepId: string,
  value: JsonValue,
  opts: { force?: boolean } = {},
): Promise<JsonValue | OutputRef> {
  const json = JSON.stringify(value ?? null);
  const bytes = Buffer.byteLength(json, 'utf8');
  // A value that looks like (or holds) a reference goes to the store: read back, it is plain data of this run.
  if (!opts.force && bytes <= OUTPUT_INLINE_LIMIT_BYTES && !json.includes(REF_KEY_JSON)) return value ?? null;
  if (bytes > OUTPUT_MAX_BYTES) throw new OutputTooLargeError(bytes);
  const _id = blobId(runId, stepId);
  await blobsCollection(db).replaceOne(
    { _id },
    { run_id: runId, step_id: stepId, bytes, json, created_at: new Date() },
    { upsert: true },
  );
  return { stepwise_blob: _id, bytes };
}

/**
 * The stored value of a reference, read only for the run that stored it or its parent runs (a sub-workflow's run id
 * extends its parent's, see domain/exec-id.ts): another run's blob is "missing".
 */
export async function readBlob(db: Db, runId: string, id: string): Promise<JsonValue> {
  const doc = await blobsCollection(db).findOne({ _id: id });
  if (!doc || !isSameOrChildRun(doc.run_id, runId)) throw new BlobMissingError(id);
  return JSON.parse(doc.json) as JsonValue;
}

function follow(value: JsonValue, path: PathSegment[], ref: string): JsonValue {
  let cur: JsonValue = value;
  for (const seg of path) {
    const next: unknown =
      typeof seg === 'number'
        ? Array.isArray(cur)
          ? cur[seg]
          : undefined
        : cur !== null && typeof cur === 'object' && !Array.isArray(cur)
          ? cur[seg]
          : undefined;
    if (next === undefined) throw new BlobPathError(`${ref}: ${String(seg)} is missing in the stored output`);
    cur = next as JsonValue;
  }
  return cur;
}

export class BlobPathError extends Error {
  readonly code = 'missing_reference';
  constructor(message: string) {
    super(message);
    this.name = 'BlobPathError';
  }
}

/**
 * Replaces every OutputRef (optionally with a `path` into it, see domain/render.ts) by its value, reading
 * only blobs of `runId`. Resolved values are not searched again: what a blob holds is data.
 */
export async function resolveOutputRefs(db: Db, runId: string, value: unknown): Promise<JsonValue> {
  if (isOutputRef(value)) {
    const stored = await readBlob(db, runId, value.stepwise_blob);
    const path = (value as OutputRef & { path?: PathSegment[] }).path;
    return path && path.length > 0 ? follow(stored, path, value.stepwise_blob) : stored;
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => resolveOutputRefs(db, runId, v)));
  if (value !== null && typeof value === 'object') {
    const entries = await Promise.all(
      Object.entries(value).map(async ([k, v]) => [k, await resolveOutputRefs(db, runId, v)] as const),
    );
    return Object.fromEntries(entries);
  }
  return value as JsonValue;
}
