/** One CLI invocation, from arguments to exit code: the entrypoint's body, callable in-process by tests. */
import { CommanderError } from 'commander';
import type { Config } from '../config';
import { createCliContext, type CliOutput } from './context';
import { CliError } from './errors';
import { buildProgram } from './program';

/**
 * Runs `argv` (the user's arguments, without `node` and the script) and returns the exit code. `env`: the
 * environment variables a definition file may name (default: the process's).
 */
export async function runCli(
  argv: string[],
  config: Config,
  io: CliOutput,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const ctx = createCliContext(config, io, env);
  try {
    await buildProgram(ctx).parseAsync(argv, { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`error: ${err.message}`);
      return err.exitCode;
    }
    // Usage errors and --help: commander has already printed what it had to say.
    if (err instanceof CommanderError) return err.exitCode;
    throw err;
  } finally {
    await ctx.close();
  }
}
