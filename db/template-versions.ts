/**
 * A version counter per template owner (and one for the system templates), bumped after every write to the
 * templates it covers. A reader that holds a copy of a list made at versions (own, system) knows the copy is still
 * the list as stored when both counters still read the same: one read of two small documents instead of the list.
 *
 * Order is what makes it correct without transactions: a writer bumps after its write has taken effect, and a
 * reader reads the counters before it lists. A list made after the counters were read is then at least as new as
 * those counters, so it is never filed under a version newer than its content.
 */
import type { Db } from 'mongodb';

interface TemplateVersionDoc {
  /** An owner id, or SYSTEM. */
  _id: string;
  v: number;
}

/** The counter of the system templates (no user id starts with `$`). */
const SYSTEM = '$system';

function versionsCollection(db: Db) {
  return db.collection<TemplateVersionDoc>('template_versions');
}

/**
 * After a write to `ownerId`'s templates (null: the system templates) has taken effect. Never fails the write it
 * follows (the write is done; failing the request would invite a duplicate): a bump that did not happen is covered
 * by the readers' time limit on their copies (api/commands/template-lists.ts).
 */
export async function bumpTemplateVersion(db: Db, ownerId: string | null): Promise<void> {
  await versionsCollection(db)
    .updateOne({ _id: ownerId ?? SYSTEM }, { $inc: { v: 1 } }, { upsert: true })
    .catch(() => undefined);
}

/** The counters of what `ownerId` sees, as one key (`<own>.<system>`; 0 for a counter never bumped). */
export async function templateVersionsOf(db: Db, ownerId: string): Promise<string> {
  const docs = await versionsCollection(db)
    .find({ _id: { $in: [ownerId, SYSTEM] } })
    .toArray();
  const of = (id: string) => docs.find((d) => d._id === id)?.v ?? 0;
  return `${of(ownerId)}.${of(SYSTEM)}`;
}
