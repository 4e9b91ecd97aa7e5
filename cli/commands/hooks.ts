/** `hooks list|create|disable|enable|rotate|delete`: a workflow's inbound webhooks, through the API with the key. */
import type { Command } from 'commander';
import type { ApiClient, HookItem } from '../api-client';
import type { ApiFlags, CliContext } from '../context';
import { printList } from '../table';
import { withApiFlags } from './api-flags';

const HOOKS_MAX = 1000;

type HookPath = { id: string; hookId: string };

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
      const api = ctx.api(flags);
      const list = await api.list(
        'GET …/hooks',
        (page) => api.http.GET('/api/v1/workflows/{id}/hooks', { params: { path: { id: workflowId }, query: page } }),
        HOOKS_MAX,
      );
      printList(ctx.io, list, {
        json: flags.json,
        empty: `no hooks; make one with: npm run cli -- hooks create ${workflowId}`,
        header: ['HOOK', 'NAME', 'SIGNATURES', 'ENABLED', 'URL'],
        row: (h) => [h.id, h.name ?? '-', h.signed ? 'signed' : 'unsigned', h.enabled ? 'on' : 'off', h.url],
      });
    });

  withApiFlags(hooks.command('create'))
    .description('a new hook: prints its id and URL, then its secret (signed hooks)')
    .argument('<workflow-id>', 'the workflow (wf_…)')
    .option('--name <name>', 'a name to tell hooks apart')
    .option('--unsigned', 'accept deliveries without a signature (the URL alone authorises them)')
    .action(async (workflowId: string, flags: ApiFlags & { name?: string; unsigned?: boolean }) => {
      const api = ctx.api(flags);
      const body = {
        ...(flags.name !== undefined ? { name: flags.name } : {}),
        ...(flags.unsigned ? { signed: false } : {}),
      };
      const answer = api.http.POST('/api/v1/workflows/{id}/hooks', { params: { path: { id: workflowId } }, body });
      printWithSecret((await api.unwrap('POST …/hooks', answer)).data);
    });

  /** A command on one hook: `act` sends its request and prints the answer. */
  const onHook = (name: string, what: string, act: (api: ApiClient, path: HookPath) => Promise<void>) =>
    withApiFlags(hooks.command(name))
      .description(what)
      .argument('<workflow-id>', 'the workflow (wf_…)')
      .argument('<hook-id>', 'the hook (hook_…)')
      .action((id: string, hookId: string, flags: ApiFlags) => act(ctx.api(flags), { id, hookId }));
  const toggle = (enabled: boolean) => async (api: ApiClient, path: HookPath) => {
    const answer = api.http.PATCH('/api/v1/workflows/{id}/hooks/{hookId}', { params: { path }, body: { enabled } });
    const hook = (await api.unwrap('PATCH …/hooks/…', answer)).data;
    ctx.io.out(`${hook.id}\t${hook.enabled ? 'enabled' : 'disabled'}`);
  };
  onHook('disable', 'stop a hook from starting runs (deliveries get 404)', toggle(false));
  onHook('enable', 'let a disabled hook start runs again', toggle(true));
  onHook('rotate', 'replace its signing secret (prints the new one; the old one stops working)', async (api, path) => {
    const answer = api.http.POST('/api/v1/workflows/{id}/hooks/{hookId}/rotate-secret', { params: { path } });
    printWithSecret((await api.unwrap('POST …/rotate-secret', answer)).data);
  });
  onHook('delete', 'delete a hook', async (api, path) => {
    const answer = api.http.DELETE('/api/v1/workflows/{id}/hooks/{hookId}', { params: { path } });
    await api.unwrap('DELETE …/hooks/…', answer);
    ctx.io.out(`deleted ${path.hookId}`);
  });
}
