/** CLI entrypoint (`npm run cli -- <command>`): parse config, run one command, exit with its code. */
import { loadConfigOrExit } from '../config';
import { runCli } from './run';

const config = loadConfigOrExit();
const stdout = process.stdout;

runCli(process.argv.slice(2), config, {
  out: (line) => stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  write: (text) => stdout.write(text),
  terminal: stdout.isTTY
    ? { write: (text) => stdout.write(text), columns: stdout.columns || 80, rows: stdout.rows || 24, stream: stdout }
    : undefined,
  input: { stream: process.stdin, isTTY: process.stdin.isTTY === true },
}).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
