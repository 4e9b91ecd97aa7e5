/**
 * `?wait=`: re-reads the projection until it changes. MongoDB change streams are not available on every supported
 * server (a standalone mongod, the embedded test server), so it polls — quickly at first (steps of short runs finish
 * within tens of ms), backing off to a steady rate for long waits.
 */
import type { Db } from 'mongodb';
import { findRun } from '../../../db/runs';
import type { RunView } from './read';

const WAIT_POLL_FIRST_MS = 20;
const WAIT_POLL_MAX_MS = 250;

/** Re-reads until the projection changes (status or any progress write) or the time is up. */
export async function waitForChange(db: Db, first: RunView, waitMs: number): Promise<RunView> {
  const deadline = Date.now() + waitMs;
  let current = first;
  let pollMs = WAIT_POLL_FIRST_MS;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
    pollMs = Math.min(WAIT_POLL_MAX_MS, pollMs * 1.5);
    const next = await findRun(db, first.owner_id, first._id);
    if (!next) return current;
    current = next;
    if (next.status !== first.status || next.updated_at.getTime() !== first.updated_at.getTime()) break;
  }
  return current;
}
