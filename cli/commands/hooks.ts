/** `hooks list|create|disable|enable|rotate|delete`: a workflow's inbound webhooks, through the API with the key. */
import type { Command } from 'commander';
import type { HookItem } from '../api-client';
import type { ApiFlags, CliContext } from '../context';
import { formatTable } from '../table';
import { withApiFlags } from './api-flags';

const HOOKS_MAX = 1000;

export function registerHookCommands(program: Command, ctx: CliContext): void {
  const hooks = program
    .command('hooks')
    .description("a workflow's inbound webhooks, through the API (--api-key or STEPWISE_API_KEY)");

  /** The new or rotated secret goes to stdout alone after the URL, so a script can capture both. */
  const printWithSecret = (hook: HookItem) => {
    ctx.io.out(`${hook.id}\t${hook.url}`);
    if (hook.secret) {
      ctx.io.out(hook.secret);
      ctx.io.err('Keep the secret: it is not shown again (rotate it to get a new one).');
    }
  };

  withApiFlags(hooks.command('list'))
    .description("the workflow's hooks")
    .argument('<workflow-id>', 'the workflow (wf_…)')
    .option('--json', 'one JSON object per line instead of a table')
    .action(async (workflowId: string, flags: ApiFlags & { json?: boolean }) => {
      const list = await ctx.api(flags).hooks(workflowId, HOOKS_MAX);
      if (flags.json) {
        for (const hook of list) ctx.io.out(JSON.stringify(hook));
        return;
      }
      if (list.length === 0) {
        ctx.io.err(`no hooks; make one with: npm run cli -- hooks create ${workflowId}`);
        return;
      }
      const rows = list.map((h) => [
        h.id,
        h.name ?? '-',
        h.signed ? 'signed' : 'unsigned',
        h.enabled ? 'on' : 'off',
        h.url,
      ]);
      for (const line of formatTable(['HOOK', 'NAME', 'SIGNATURES', 'ENABLED', 'URL'], rows)) ctx.io.out(line);
    });

  withApiFlags(hooks.command('create'))
    .description('a new hook: prints its id and URL, then its secret (signed hooks)')
    .argument('<workflow-id>', 'the workflow (wf_…)')
    .option('--name <name>', 'a name to tell hooks apart')
    .option('--unsigned', 'accept deliveries without a signature (the URL alone authorises them)')
    .action(async (workflowId: string, flags: ApiFlags & { name?: string; unsigned?: boolean }) => {
      const hook = await ctx.api(flags).createHook(workflowId, {
        ...(flags.name !== undefined ? { name: flags.name } : {}),
        ...(flags.unsigned ? { signed: false } : {}),
      });
      printWithSecret(hook);
    });

  const change = (name: string, what: string, apply: { enabled: boolean } | 'rotate' | 'delete') =>
    withApiFlags(hooks.command(name))
      .description(what)
      .argument('<workflow-id>', 'the workflow (wf_…)')
      .argument('<hook-id>', 'the hook (hook_…)')
      .action(async (workflowId: string, hookId: string, flags: ApiFlags) => {
        const hook = await ctx.api(flags).changeHook(workflowId, hookId, apply);
        if (!hook) ctx.io.out(`deleted ${hookId}`);
        else if (apply === 'rotate') printWithSecret(hook);
        else ctx.io.out(`${hook.id}\t${hook.enabled ? 'enabled' : 'disabled'}`);
      });
  change('disable', 'stop a hook from starting runs (deliveries get 404)', { enabled: false });
  change('enable', 'let a disabled hook start runs again', { enabled: true });
  change('rotate', 'replace its signing secret (prints the new one; the old one stops working)', 'rotate');
  change('delete', 'delete a hook', 'delete');
}
