/** The flags every user command (`runs …`, `approvals …`) takes to reach the API as its user, and their number flags. */
import type { Command } from 'commander';
import { CliError } from '../errors';

export function withApiFlags(command: Command): Command {
  return command
    .option('--url <url>', 'the Stepwise API (default: STEPWISE_URL, else http://127.0.0.1:<API_PORT>)')
    .option('--api-key <key>', 'your API key (default: STEPWISE_API_KEY)');
}

/** A flag's value as a whole number from 1 to `max` (`--limit`); a CliError naming the flag otherwise. */
export function wholeNumber(flag: string, value: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CliError(`${flag}: a whole number from 1 to ${max}`);
  return n;
}
