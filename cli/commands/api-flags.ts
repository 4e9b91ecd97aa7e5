/** The flags every user command (`runs …`, `approvals …`) takes to reach the API as its user. */
import type { Command } from 'commander';

export function withApiFlags(command: Command): Command {
  return command
    .option('--url <url>', 'the Stepwise API (default: STEPWISE_URL, else http://127.0.0.1:<API_PORT>)')
    .option('--api-key <key>', 'your API key (default: STEPWISE_API_KEY)');
}
