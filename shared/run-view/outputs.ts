/** Step outputs for the status view: parsed, with references to large outputs resolved (extra reads only for those). */
import type { Db } from 'mongodb';
import type { JsonValue } from '../../domain/json';
import { isOutputRef } from '../../domain/run';
import { readBlob } from '../../db/blobs';
import type { RunDoc } from '../../db/runs';

/** A step output as the status view shows it: the value, and its size when it was stored by reference. */
export interface ResolvedOutput {
  value: JsonValue;
  /** Set for outputs kept in the blobs collection (over OUTPUT_INLINE_LIMIT_BYTES). */
  storedBytes?: number;
}

/**
 * Each step's output, parsed and with references to large outputs resolved (extra reads only for those). With
 * `resolveLarge: false` a large output stays `{stored_by_reference: true, bytes}` (bounded bodies, e.g. webhooks).
 */
export async function resolveOutputs(
  db: Db,
  run: Pick<RunDoc, '_id' | 'steps'>,
  opts: { resolveLarge?: boolean } = {},
): Promise<Map<string, ResolvedOutput>> {
  const out = new Map<string, ResolvedOutput>();
  await Promise.all(
    run.steps.map(async (s) => {
      if (s.output_json === null) return;
      const value = JSON.parse(s.output_json) as JsonValue;
      if (!isOutputRef(value)) {
        out.set(s.id, { value });
        return;
      }
      if (opts.resolveLarge === false) {
        out.set(s.id, { value: { stored_by_reference: true, bytes: value.bytes }, storedBytes: value.bytes });
        return;
      }
      // A missing blob (removed by hand) must not make the status unreadable: it shows as null.
      const stored = await readBlob(db, run._id, value.stepwise_blob).catch(() => null);
      out.set(s.id, { value: stored, storedBytes: value.bytes });
    }),
  );
  return out;
}
