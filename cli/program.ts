/** The `stepwise` command line: users and API keys (`npm run cli -- --help`). */
import { Command } from 'commander';
import type { CliContext } from './context';
import { registerKeyCommands } from './commands/keys';
import { registerUserCommands } from './commands/users';

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('stepwise')
    .description('Stepwise administration: users and their API keys (uses MONGODB_URI / MONGODB_DB)')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => ctx.io.out(s.trimEnd()), writeErr: (s) => ctx.io.err(s.trimEnd()) });
  registerUserCommands(program, ctx);
  registerKeyCommands(program, ctx);
  return program;
}
