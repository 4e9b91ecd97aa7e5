/**
 * The dev stack's demo user: created on the first `npm run dev` with one API key. The database keeps only the key's
 * hash, so the plaintext is kept in a 0600 file under the ignored state folder and printed again at every start.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from 'mongodb';
import { apiKeysCollection, createApiKey, createUser, findUserByName, hashKey, type UserDoc } from '../db/users';
import { isDuplicateKey } from '../db/duplicate-key';

export const DEMO_USER_NAME = 'demo';

export interface DemoKey {
  key: string;
  /** true when this start created the key (first start, or the stored one no longer works). */
  created: boolean;
}

/**
 * The demo user's working key. Reuses the key in `keyFile` while it still authenticates as the demo user; otherwise
 * (no file, revoked key, a database that was reset) creates a fresh key and rewrites the file.
 */
export async function ensureDemoKey(db: Db, keyFile: string): Promise<DemoKey> {
  const user = await ensureDemoUser(db);
  const stored = readKeyFile(keyFile);
  if (stored) {
    const match = await apiKeysCollection(db).findOne({ hash: hashKey(stored), user_id: user._id, revoked_at: null });
    if (match) return { key: stored, created: false };
  }
  const { key } = await createApiKey(db, user._id, 'demo (npm run dev)');
  writeKeyFile(keyFile, key);
  return { key, created: true };
}

async function ensureDemoUser(db: Db): Promise<UserDoc> {
  const existing = await findUserByName(db, DEMO_USER_NAME);
  if (existing) return existing;
  try {
    return await createUser(db, DEMO_USER_NAME);
  } catch (err) {
    // Another process created it between our read and insert: the unique index decides, and we use theirs.
    if (isDuplicateKey(err)) {
      const user = await findUserByName(db, DEMO_USER_NAME);
      if (user) return user;
    }
    throw err;
  }
}

function readKeyFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function writeKeyFile(file: string, key: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Written under a temporary name with mode 0600 from the start, then renamed: the secret is never world-readable,
  // and a crash never leaves half a key.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${key}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}
