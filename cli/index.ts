/** CLI entrypoint (`npm run cli -- <command>`): parse config, run one command, close the database, exit. */
import { loadConfigOrExit } from '../config';
import { createCliContext } from './context';
import { CliError } from './errors';
import { buildProgram } from './program';

async function main(): Promise<number> {
  const config = loadConfigOrExit();
  const ctx = createCliContext(config, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
  try {
    await buildProgram(ctx).parseAsync(process.argv);
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      process.stderr.write(`error: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  } finally {
    await ctx.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
