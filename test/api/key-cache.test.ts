/**
 * API keys are trusted from memory for API_KEY_CACHE_SECONDS after a read: a revocation (written by another process,
 * the CLI) bites within that bound and not later; unknown keys are never remembered.
 */
import { KeyCache } from '../../api/middleware/key-cache';
import type { Database } from '../../db/client';
import { apiKeysCollection, createApiKey, createUser, hashKey, revokeApiKey } from '../../db/users';
import { createTestUser } from '../helpers/users';
import { openTestDb, startTestApi, testConfig, type TestApi } from '../helpers/stack';

describe('the API key cache', () => {
  let database: Database;
  let clock = 0;
  const TTL_MS = 5_000;

  beforeAll(async () => {
    database = await openTestDb(testConfig());
  });
  afterAll(() => database?.close());

  it('serves a checked key from memory until the bound, then reads it again and sees the revocation', async () => {
    const user = await createUser(database.db, 'cache-revoke');
    const { key, doc } = await createApiKey(database.db, user._id);
    const cache = new KeyCache(database.db, TTL_MS, () => clock);
    expect(await cache.authenticate(key)).toEqual({ user_id: user._id, key_id: doc._id });

    // Proof the second answer came from memory: the stored key is gone, yet it still authenticates.
    await apiKeysCollection(database.db).deleteOne({ _id: doc._id });
    clock += TTL_MS - 1;
    expect(await cache.authenticate(key)).toEqual({ user_id: user._id, key_id: doc._id });
    await apiKeysCollection(database.db).insertOne(doc);

    expect(await revokeApiKey(database.db, doc._id)).toBe(true);
    clock += 1;
    expect(await cache.authenticate(key)).toBeNull();
    // And it stays refused: a refusal is not remembered as a success.
    expect(await cache.authenticate(key)).toBeNull();
  });

  it('never remembers a key it could not find, so a key stored a moment later works at once', async () => {
    const user = await createUser(database.db, 'cache-late');
    const { key, doc } = await createApiKey(database.db, user._id);
    await apiKeysCollection(database.db).deleteOne({ _id: doc._id });
    const cache = new KeyCache(database.db, TTL_MS, () => clock);
    expect(await cache.authenticate(key)).toBeNull();
    await apiKeysCollection(database.db).insertOne(doc);
    expect(await cache.authenticate(key)).toEqual({ user_id: user._id, key_id: doc._id });
  });

  it('keeps last_used_at current: a re-check after the bound reads (and touches) the key', async () => {
    const user = await createUser(database.db, 'cache-touch');
    const { key, doc } = await createApiKey(database.db, user._id);
    await apiKeysCollection(database.db).updateOne({ _id: doc._id }, { $set: { last_used_at: new Date(0) } });
    const cache = new KeyCache(database.db, TTL_MS, () => clock);
    await cache.authenticate(key);
    // The touch is written in the background: poll for it.
    for (let i = 0; i < 50; i++) {
      const stored = await apiKeysCollection(database.db).findOne({ hash: hashKey(key) });
      if (stored?.last_used_at && stored.last_used_at.getTime() > 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('last_used_at was not written');
  });
});

describe('the API with its key cache', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(testConfig({ API_KEY_CACHE_SECONDS: '1' }));
  });
  afterAll(() => api?.close());

  it('refuses a revoked key once the bound has passed', async () => {
    const user = await createTestUser(api.database.db);
    expect((await api.http.get('/api/v1/agents').set(user.auth)).status).toBe(200);
    const stored = await apiKeysCollection(api.database.db).findOne({ user_id: user.id });
    await revokeApiKey(api.database.db, stored!._id);
    // Poll rather than sleep: the answer must turn to 401 (within the 1 s bound) and stay so.
    let status = 200;
    for (let i = 0; i < 100 && status === 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = (await api.http.get('/api/v1/agents').set(user.auth)).status;
    }
    expect(status).toBe(401);
    expect((await api.http.get('/api/v1/agents').set(user.auth)).status).toBe(401);
  });
});
