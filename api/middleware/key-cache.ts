/**
 * Presented API keys this process has recently checked, so a request does not pay a database read for its key.
 * Revocation is still honoured within `ttlMs` (API_KEY_CACHE_SECONDS): an entry is trusted only that long after it
 * was read, and revocations are written by another process (the CLI), so no in-process invalidation could be complete.
 * Only successes are kept: an unknown or revoked key is looked up every time (and limited per IP), so a key created a
 * moment ago works at once. Entries are keyed by the key's hash, never the key itself. A re-check reads the key again,
 * which also keeps its `last_used_at` current (db/users.ts writes it at most once a minute).
 */
import type { Db } from 'mongodb';
import { authenticateKey, hashKey, type KeyIdentity } from '../../db/users';

/** Bounds the memory a flood of distinct valid keys could take; the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  identity: KeyIdentity;
  checkedAt: number;
}

export class KeyCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** `hash`: the presented key's hashKey, when the caller has it already. */
  async authenticate(presented: string, hash = hashKey(presented)): Promise<KeyIdentity | null> {
    if (this.ttlMs <= 0) return authenticateKey(this.db, presented);
    const cached = this.entries.get(hash);
    const now = this.now();
    if (cached && now - cached.checkedAt < this.ttlMs) return cached.identity;
    this.entries.delete(hash);
    const identity = await authenticateKey(this.db, presented);
    if (!identity) return null;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { identity, checkedAt: now });
    return identity;
  }
}
