/**
 * `workflows apply|export` and `agents apply|export`: definitions as code. A team keeps its workflows and templates
 * in files under version control and applies them from CI; names match files to what is stored.
 */
import type { Command } from 'commander';
import type { ApiFlags, CliContext } from '../context';
import { applyTemplates, applyWorkflows } from '../definitions/apply';
import { exportTemplate, exportWorkflow, formatDefinition } from '../definitions/export';
import { withApiFlags } from './api-flags';

type ApplyFlags = ApiFlags & { file: string; dryRun?: boolean };
type ExportFlags = ApiFlags & { json?: boolean };

/** Returns the `workflows` and `agents` groups, for the commands beside definitions as code (./catalog.ts). */
export function registerDefinitionCommands(program: Command, ctx: CliContext): Record<'workflows' | 'agents', Command> {
  const groups: Partial<Record<'workflows' | 'agents', Command>> = {};
  const kinds = [
    {
      command: 'workflows',
      noun: 'workflow',
      a: 'a workflow',
      id: 'wf_…',
      apply: applyWorkflows,
      export: exportWorkflow,
    },
    {
      command: 'agents',
      noun: 'agent template',
      a: 'an agent template',
      id: 'tpl_…',
      apply: applyTemplates,
      export: exportTemplate,
    },
  ] as const;
  for (const kind of kinds) {
    const group = program
      .command(kind.command)
      .description(`your ${kind.noun}s, listed and as code, through the API (--api-key or STEPWISE_API_KEY)`);
    groups[kind.command] = group;
    withApiFlags(group.command('apply'))
      .description(
        `create or update ${kind.noun}s by name from a YAML or JSON file (one, a list, or several YAML documents); ` +
          'prints what changed; every definition is checked by the server before any is written',
      )
      .requiredOption('-f, --file <file>', 'the definition file')
      .option('--dry-run', 'check every definition with the server and print what would change; write nothing')
      .action(async (flags: ApplyFlags) => {
        await kind.apply(ctx.api(flags), ctx.io, flags.file, flags.dryRun ?? false);
      });
    withApiFlags(group.command('export'))
      .description(`print ${kind.a} as a file \`apply\` takes back (YAML)`)
      .argument('<id>', `the ${kind.noun} (${kind.id})`)
      .option('--json', 'JSON instead of YAML')
      .action(async (id: string, flags: ExportFlags) => {
        ctx.io.out(formatDefinition(await kind.export(ctx.api(flags), id), flags.json ?? false));
      });
  }
  return { workflows: groups.workflows!, agents: groups.agents! };
}
