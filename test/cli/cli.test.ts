import { apiKeysCollection, authenticateKey, findUserByName, hashKey } from '../../db/users';
import { openTestDb, testConfig, uniqueId } from '../helpers/stack';
import { runTs, type RunResult } from '../helpers/run-node';
import type { Database } from '../../db/client';
import type { Config } from '../../config';

describe('the CLI (a real child process against the suite MongoDB)', () => {
  let config: Config;
  let database: Database;
  const cli = (...args: string[]): Promise<RunResult> =>
    runTs('cli/index.ts', args, {
      MONGODB_URI: config.MONGODB_URI,
      MONGODB_DB: config.MONGODB_DB,
      LOG_LEVEL: 'silent',
    });

  beforeAll(async () => {
    config = testConfig();
    database = await openTestDb(config);
  });
  afterAll(async () => {
    await database?.db.dropDatabase().catch(() => undefined);
    await database?.close();
  });

  it('creates a user, refuses a duplicate name, and refuses keys for an unknown user', async () => {
    const name = uniqueId('alice-');
    const created = await cli('users', 'create', name);
    expect(created).toMatchObject({ code: 0 });
    const stored = await findUserByName(database.db, name);
    expect(stored).not.toBeNull();
    expect(created.stdout).toContain(stored!._id);

    const duplicate = await cli('users', 'create', name);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain(`user "${name}" already exists`);

    const unknown = await cli('keys', 'create', 'nobody-here');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown user "nobody-here"');
    expect(await apiKeysCollection(database.db).countDocuments({})).toBe(0);
  });

  it('prints a new key once, stores only its hash, lists it without the hash, and revokes it', async () => {
    const name = uniqueId('bob-');
    expect((await cli('users', 'create', name)).code).toBe(0);
    const user = (await findUserByName(database.db, name))!;

    const created = await cli('keys', 'create', name, '--label', 'laptop');
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^sw_[A-Za-z0-9_-]{43}$/);
    const [doc] = await apiKeysCollection(database.db).find({ user_id: user._id }).toArray();
    expect(doc).toMatchObject({ hash: hashKey(key), label: 'laptop', prefix: key.slice(0, 8), revoked_at: null });
    // Only the hash is stored: the plaintext appears nowhere in the document.
    expect(JSON.stringify(doc)).not.toContain(key);
    expect((await authenticateKey(database.db, key))?._id).toBe(user._id);

    const table = await cli('keys', 'list', name);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/ID\s+PREFIX\s+LABEL\s+CREATED\s+LAST USED\s+REVOKED/);
    expect(table.stdout).toContain(doc!._id);
    expect(table.stdout).toContain('laptop');
    expect(table.stdout).not.toContain(doc!.hash);
    expect(table.stdout).not.toContain(key);

    const listed = await cli('keys', 'list', name, '--json');
    const rows = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0]!).sort()).toEqual(['created_at', 'id', 'label', 'last_used_at', 'prefix', 'revoked_at']);
    expect(rows[0]).toMatchObject({ id: doc!._id, prefix: key.slice(0, 8), revoked_at: null });

    const revoked = await cli('keys', 'revoke', doc!._id);
    expect(revoked.code).toBe(0);
    expect(await authenticateKey(database.db, key)).toBeNull();
    const after = JSON.parse((await cli('keys', 'list', name, '--json')).stdout) as { revoked_at: string | null }[];
    expect(after[0]!.revoked_at).toEqual(expect.any(String));

    const again = await cli('keys', 'revoke', doc!._id);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('already revoked');
    const unknown = await cli('keys', 'revoke', 'key_doesnotexist1');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown key "key_doesnotexist1"');
  });

  it('stops with the list of problems on a bad configuration', async () => {
    const res = await runTs('cli/index.ts', ['users', 'create', 'x'], {
      MONGODB_URI: 'http://nope',
      MONGODB_DB: 'bad db',
    });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain('MONGODB_URI');
    expect(res.stderr).toContain('MONGODB_DB');
  });
});
