/** A run input given on the command line (`--input '<json>'`) or in a file (`--input-file input.json`). */
import fs from 'node:fs';
import { CliError } from '../errors';

/** A JSON object, or undefined when neither flag is given; `flag` names the source in messages. */
export function parseInput(text: string | undefined, flag = '--input'): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError(`${flag}: not JSON (give a JSON object, e.g. '{"team":"ops"}')`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(`${flag}: give a JSON object`);
  }
  return value as Record<string, unknown>;
}

export function inputFrom(flags: { input?: string; inputFile?: string }): Record<string, unknown> | undefined {
  if (flags.input !== undefined && flags.inputFile !== undefined) {
    throw new CliError('--input and --input-file: give one of them');
  }
  if (flags.inputFile === undefined) return parseInput(flags.input);
  let text: string;
  try {
    text = fs.readFileSync(flags.inputFile, 'utf8');
  } catch (err) {
    throw new CliError(
      `--input-file: cannot read ${flags.inputFile} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  return parseInput(text, `--input-file ${flags.inputFile}`);
}
