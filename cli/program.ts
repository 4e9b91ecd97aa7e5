/**
 * The `stepwise` command line (`npm run cli -- --help`): administration over the database (users, keys) and a user's
 * commands over the HTTP API (runs, approvals, hooks, schedules).
 */
import { Command } from 'commander';
import type { CliContext } from './context';
import { registerApprovalCommands } from './commands/approvals';
import { registerAgentList, registerWorkflowList } from './commands/catalog';
import { registerDatasetCommands } from './commands/datasets';
import { registerDefinitionCommands } from './commands/definitions';
import { registerEvalCommands } from './commands/eval';
import { registerHookCommands } from './commands/hooks';
import { registerMcpServerCommands } from './commands/mcp-servers';
import { registerScheduleCommands } from './commands/schedules';
import { registerKeyCommands } from './commands/keys';
import { registerRunCommands } from './commands/runs';
import { registerUsageCommands } from './commands/usage';
import { registerChatCommand } from './commands/chat';
import { registerThreadCommands } from './commands/threads';
import { registerUserCommands } from './commands/users';

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('stepwise')
    .description(
      'Stepwise: users and keys (admin, uses MONGODB_URI / MONGODB_DB); runs, approvals, threads and chat, hooks, ' +
        'schedules, datasets, workflows and agents (as a user, through the API: STEPWISE_URL, STEPWISE_API_KEY)',
    )
    .showHelpAfterError()
    // Set before the subcommands are added, which inherit both: a usage error anywhere (an unknown subcommand, a
    // missing argument) is thrown to runCli instead of ending the process, and its text goes to the CLI's output.
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.io.out(s.trimEnd()), writeErr: (s) => ctx.io.err(s.trimEnd()) });
  registerUserCommands(program, ctx);
  registerKeyCommands(program, ctx);
  registerRunCommands(program, ctx);
  registerApprovalCommands(program, ctx);
  registerThreadCommands(program, ctx);
  registerChatCommand(program, ctx);
  registerHookCommands(program, ctx);
  registerScheduleCommands(program, ctx);
  registerMcpServerCommands(program, ctx);
  registerUsageCommands(program, ctx);
  registerDatasetCommands(program, ctx);
  registerEvalCommands(program, ctx);
  const { workflows, agents } = registerDefinitionCommands(program, ctx);
  registerWorkflowList(workflows, ctx);
  registerAgentList(agents, ctx);
  return program;
}
