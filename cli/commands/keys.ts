/** `keys create|list|revoke`: the plaintext key is printed once, at creation; listings never show the hash. */
import type { Command } from 'commander';
import { apiKeysCollection, createApiKey, listApiKeys, revokeApiKey, type ApiKeyDoc } from '../../db/users';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { requireUserByName } from './users';
import { formatTable } from '../table';

/** The fields a listing may show: everything but the hash. */
export interface KeyListing {
  id: string;
  prefix: string;
  label: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export function toListing(doc: ApiKeyDoc): KeyListing {
  return {
    id: doc._id,
    prefix: doc.prefix,
    label: doc.label,
    created_at: doc.created_at.toISOString(),
    last_used_at: doc.last_used_at?.toISOString() ?? null,
    revoked_at: doc.revoked_at?.toISOString() ?? null,
  };
}

export function registerKeyCommands(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description('manage API keys');

  keys
    .command('create')
    .description('create an API key for a user and print it (shown only this once)')
    .argument('<user-name>', 'the user the key acts for')
    .option('-l, --label <label>', 'a note to recognise the key by', 'default')
    .action(async (userName: string, opts: { label: string }) => {
      const user = await requireUserByName(ctx, userName);
      const { key, doc } = await createApiKey(await ctx.db(), user._id, opts.label);
      ctx.io.out(key);
      ctx.io.err(
        `Created key ${doc._id} ("${doc.label}") for user "${user.name}". Store it now: it is not shown again.`,
      );
    });

  keys
    .command('list')
    .description("list a user's keys: prefix, label, created, last used, revoked (never the secret or its hash)")
    .argument('<user-name>', 'the user whose keys to list')
    .option('--json', 'print JSON instead of a table')
    .action(async (userName: string, opts: { json?: boolean }) => {
      const user = await requireUserByName(ctx, userName);
      const listings = (await listApiKeys(await ctx.db(), user._id)).map(toListing);
      if (opts.json) {
        ctx.io.out(JSON.stringify(listings, null, 2));
        return;
      }
      if (listings.length === 0) {
        ctx.io.err(`user "${user.name}" has no keys`);
        return;
      }
      const rows = listings.map((k) => [
        k.id,
        `${k.prefix}…`,
        k.label,
        k.created_at,
        k.last_used_at ?? 'never',
        k.revoked_at ?? '-',
      ]);
      for (const line of formatTable(['ID', 'PREFIX', 'LABEL', 'CREATED', 'LAST USED', 'REVOKED'], rows))
        ctx.io.out(line);
    });

  keys
    .command('revoke')
    .description('revoke a key: it stops authenticating at once')
    .argument('<key-id>', 'the key id (key_…) from `keys list`')
    .action(async (keyId: string) => {
      const db = await ctx.db();
      if (await revokeApiKey(db, keyId)) {
        ctx.io.out(`revoked ${keyId}`);
        return;
      }
      // Nothing changed: tell an unknown id apart from a key that was already revoked.
      const existing = await apiKeysCollection(db).findOne({ _id: keyId }, { projection: { revoked_at: 1 } });
      if (!existing) throw new CliError(`unknown key "${keyId}"; see: npm run cli -- keys list <user-name>`);
      ctx.io.err(`${keyId} was already revoked at ${existing.revoked_at?.toISOString() ?? 'an unknown time'}`);
    });
}
