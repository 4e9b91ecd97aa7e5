/** `users create <name>`. */
import type { Command } from 'commander';
import { createUser, findUserByName, type UserDoc } from '../../db/users';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { isDuplicateKey } from '../../db/duplicate-key';

export function registerUserCommands(program: Command, ctx: CliContext): void {
  const users = program.command('users').description('manage users');
  users
    .command('create')
    .description('create a user (names are unique)')
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      const trimmed = name.trim();
      if (!trimmed) throw new CliError('the user name must not be empty');
      const db = await ctx.db();
      let user: UserDoc;
      try {
        user = await createUser(db, trimmed);
      } catch (err) {
        if (isDuplicateKey(err)) throw new CliError(`user "${trimmed}" already exists`);
        throw err;
      }
      ctx.io.out(`${user._id}\t${user.name}`);
      ctx.io.err(`Created user "${user.name}". Give it a key with: npm run cli -- keys create ${user.name}`);
    });
}

/** The user named `name`, or a CliError the person can act on. */
export async function requireUserByName(ctx: CliContext, name: string): Promise<UserDoc> {
  const user = await findUserByName(await ctx.db(), name);
  if (!user) throw new CliError(`unknown user "${name}"; create it with: npm run cli -- users create ${name}`);
  return user;
}
