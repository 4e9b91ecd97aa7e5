import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDemoKey, DEMO_USER_NAME } from '../../devstack/demo-user';
import { apiKeysCollection, authenticateKey, findUserByName, revokeApiKey, hashKey } from '../../db/users';
import type { Database } from '../../db/client';
import { openTestDb, testConfig } from '../helpers/stack';

describe('the dev stack demo user', () => {
  let database: Database;
  let dir: string;
  let keyFile: string;

  beforeAll(async () => {
    database = await openTestDb(testConfig());
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-demo-'));
    keyFile = path.join(dir, 'state', 'demo-key');
  });
  afterAll(async () => {
    await database?.db.dropDatabase().catch(() => undefined);
    await database?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates the user and a key on first start, keeps the plaintext only in a 0600 file, and reuses it later', async () => {
    const first = await ensureDemoKey(database.db, keyFile);
    expect(first.created).toBe(true);
    const user = await findUserByName(database.db, DEMO_USER_NAME);
    expect((await authenticateKey(database.db, first.key))?._id).toBe(user!._id);
    expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(first.key);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    // The database holds the hash, never the key.
    const docs = await apiKeysCollection(database.db).find({ user_id: user!._id }).toArray();
    expect(docs.map((d) => d.hash)).toEqual([hashKey(first.key)]);

    const second = await ensureDemoKey(database.db, keyFile);
    expect(second).toEqual({ key: first.key, created: false });
    expect(await apiKeysCollection(database.db).countDocuments({ user_id: user!._id })).toBe(1);
  });

  it('creates a fresh key when the file is gone or its key no longer works, for the same user', async () => {
    const user = (await findUserByName(database.db, DEMO_USER_NAME))!;
    const before = (await ensureDemoKey(database.db, keyFile)).key;

    fs.rmSync(keyFile);
    const afterDelete = await ensureDemoKey(database.db, keyFile);
    expect(afterDelete.created).toBe(true);
    expect(afterDelete.key).not.toBe(before);
    expect((await authenticateKey(database.db, afterDelete.key))?._id).toBe(user._id);

    const stored = await apiKeysCollection(database.db).findOne({ hash: hashKey(afterDelete.key) });
    await revokeApiKey(database.db, stored!._id);
    const afterRevoke = await ensureDemoKey(database.db, keyFile);
    expect(afterRevoke.created).toBe(true);
    expect(afterRevoke.key).not.toBe(afterDelete.key);
    expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(afterRevoke.key);
    expect(await database.db.collection('users').countDocuments({ name: DEMO_USER_NAME })).toBe(1);
  });
});
