/**
 * `threads list|get|create|messages|fork|delete` (docs/threads.md): a user's threads through the API with their key.
 * `chat` (./chat.ts) is the interactive way to talk in one; these read and manage them, and `create` and `fork`
 * print the new thread's id on stdout so a script can capture it.
 */
import type { Command } from 'commander';
import type { Schemas } from '../../client';
import type { ApiClient } from '../api-client';
import type { ApiFlags, CliContext } from '../context';
import { printList } from '../table';
import { cleanText } from '../watch/live-text';
import { wholeNumber, withApiFlags } from './api-flags';

export type ThreadItem = Schemas['Thread'];
export type ThreadMessageItem = Schemas['ThreadMessage'];

/** The most messages `messages` and `chat` read of one thread (a chat of 500 turns has about 1 500). */
export const THREAD_MESSAGES_MAX = 10_000;

const tokens = (u: { input_tokens: number; output_tokens: number }) => String(u.input_tokens + u.output_tokens);

/** One line of a tool call's arguments or result, cut to `max` characters. */
export function short(value: unknown, max = 120): string {
  const text = cleanText(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null')).replace(/\n/g, ' ');
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * A message of the conversation as text lines: `you> …`, `agent> …`, a tool call's line, an approval's with its
 * decision, and a turn that did not complete with its reason. The `chat` command prints the recent ones with the same lines when it resumes a thread.
 */
export function messageLines(m: ThreadMessageItem): string[] {
  const text = cleanText(m.text ?? '');
  switch (m.role) {
    case 'user': {
      const lines = [`you> ${text}`];
      if (m.status && m.status !== 'completed') {
        lines.push(`  (turn ${m.turn} ${m.status}${m.error ? `: ${m.error.reason}: ${m.error.message}` : ''})`);
      }
      return lines;
    }
    case 'assistant':
      return text ? [`agent> ${text}`] : [];
    case 'tool':
      return m.tool
        ? [
            `  · ${m.tool.name}(${short(m.tool.args, 80)}) ${m.tool.is_error ? 'failed' : 'ok'}: ${short(m.tool.output)}`,
          ]
        : [];
    case 'summary':
      // What the model now gets in place of the turns it covers; the turns themselves are still listed.
      return [`  (summary of earlier turns) ${short(text, 200)}`];
    case 'approval': {
      if (!m.approval) return [];
      const a = m.approval;
      const outcome =
        a.status === 'requested'
          ? 'not decided'
          : `${a.status}${a.decided_by ? ` by ${a.decided_by}` : ''}${a.comment ? `: ${cleanText(a.comment)}` : ''}`;
      return [`  ? approval of ${a.name}(${short(a.args, 80)}): ${outcome}`];
    }
  }
}

/** The thread's messages, oldest first, up to `max` (the API pages them oldest first). */
export async function threadMessages(api: ApiClient, id: string, max = THREAD_MESSAGES_MAX) {
  return api.list(
    'GET …/messages',
    (page) => api.http.GET('/api/v1/threads/{id}/messages', { params: { path: { id }, query: page } }),
    max,
  );
}

export async function getThread(api: ApiClient, id: string): Promise<ThreadItem> {
  return (await api.unwrap('GET /threads/:id', api.http.GET('/api/v1/threads/{id}', { params: { path: { id } } })))
    .data;
}

export async function createThread(api: ApiClient, template: string, title?: string): Promise<ThreadItem> {
  const answer = api.http.POST('/api/v1/threads', { body: { template, ...(title ? { title } : {}) } });
  return (await api.unwrap('POST /threads', answer)).data;
}

function threadLines(t: ThreadItem): string[] {
  return [
    `${t.id}  ${t.title ?? '(untitled)'}  ${t.template_name} (${t.template_id})`,
    [
      `turns ${t.turns}`,
      `messages ${t.message_count}`,
      `running ${t.running_turn ? `turn ${t.running_turn.turn} (${t.running_turn.run_id})` : '-'}`,
      `queued ${t.queued}`,
      `tokens ${tokens(t.usage)}`,
    ].join('  '),
    `created ${t.created_at}  updated ${t.updated_at}  last message ${t.last_message_id ?? '-'}`,
    ...(Object.keys(t.metadata).length ? [`metadata ${JSON.stringify(t.metadata)}`] : []),
  ];
}

export function registerThreadCommands(program: Command, ctx: CliContext): void {
  const threads = program
    .command('threads')
    .description('your threads (conversations with an agent), through the API; talk in one with `chat`');

  withApiFlags(threads.command('list'))
    .description('your threads, newest first')
    .option('--template <id>', 'only the threads of this agent template (tpl_…)')
    .option('--search <text>', 'text in the title (case-insensitive)')
    .option('--limit <n>', 'how many threads at most', '50')
    .option('--json', 'one JSON object per line instead of a table')
    .action(async (flags: ApiFlags & { template?: string; search?: string; limit: string; json?: boolean }) => {
      const api = ctx.api(flags);
      const limit = wholeNumber('--limit', flags.limit, 10_000);
      const query = { template_id: flags.template, q: flags.search };
      const found = await api.list(
        'GET /threads',
        (page) => api.http.GET('/api/v1/threads', { params: { query: { ...query, ...page } } }),
        limit,
      );
      printList(ctx.io, found, {
        json: flags.json,
        empty: 'no threads match',
        header: ['THREAD', 'TITLE', 'TEMPLATE', 'TURNS', 'RUNNING', 'UPDATED', 'TOKENS'],
        row: (t) => [
          t.id,
          t.title ?? '-',
          t.template_name,
          String(t.turns),
          t.running_turn ? `turn ${t.running_turn.turn}` : '-',
          t.updated_at,
          tokens(t.usage),
        ],
      });
    });

  withApiFlags(threads.command('get'))
    .description('one thread: title, template, turns, messages, the running turn, usage')
    .argument('<thread-id>', 'the thread (thr_…)')
    .option('--json', 'the whole thread as JSON')
    .action(async (id: string, flags: ApiFlags & { json?: boolean }) => {
      const thread = await getThread(ctx.api(flags), id);
      if (flags.json) ctx.io.out(JSON.stringify(thread));
      else for (const line of threadLines(thread)) ctx.io.out(line);
    });

  withApiFlags(threads.command('create'))
    .description('a new thread on an agent template; prints its id (talk in it with `chat <id>`)')
    .argument('<template>', 'the agent template: its id (tpl_…) or its name')
    .option('--title <title>', 'the thread’s title')
    .option('--json', 'the whole thread as JSON')
    .action(async (template: string, flags: ApiFlags & { title?: string; json?: boolean }) => {
      const thread = await createThread(ctx.api(flags), template, flags.title);
      ctx.io.out(flags.json ? JSON.stringify(thread) : thread.id);
    });

  withApiFlags(threads.command('messages'))
    .description('the conversation, oldest first: your messages, the agent’s answers, its tool calls')
    .argument('<thread-id>', 'the thread (thr_…)')
    .option('--limit <n>', 'how many messages at most (the oldest first)', String(THREAD_MESSAGES_MAX))
    .option('--json', 'one JSON object per line')
    .action(async (id: string, flags: ApiFlags & { limit: string; json?: boolean }) => {
      const list = await threadMessages(ctx.api(flags), id, wholeNumber('--limit', flags.limit, THREAD_MESSAGES_MAX));
      if (flags.json) for (const m of list) ctx.io.out(JSON.stringify(m));
      else if (list.length === 0) ctx.io.err('no messages yet');
      else for (const m of list) for (const line of messageLines(m)) ctx.io.out(line);
    });

  withApiFlags(threads.command('fork'))
    .description('a new thread with the conversation up to a message (no model call); prints its id')
    .argument('<thread-id>', 'the thread (thr_…)')
    .requiredOption('--at <message-id>', 'the last message the new thread keeps (m<turn>.<pos>, see `messages --json`)')
    .option('--title <title>', 'the new thread’s title')
    .action(async (id: string, flags: ApiFlags & { at: string; title?: string }) => {
      const api = ctx.api(flags);
      const answer = api.http.POST('/api/v1/threads/{id}/fork', {
        params: { path: { id } },
        body: { at: flags.at, ...(flags.title ? { title: flags.title } : {}) },
      });
      const fork = (await api.unwrap('POST …/fork', answer)).data;
      ctx.io.out(fork.id);
      ctx.io.err(`Forked ${id} at ${flags.at}. Talk in it with: npm run cli -- chat ${fork.id}`);
    });

  withApiFlags(threads.command('delete'))
    .description('delete a thread: its running turn is cancelled, then its messages and turns are removed')
    .argument('<thread-id>', 'the thread (thr_…)')
    .action(async (id: string, flags: ApiFlags) => {
      const api = ctx.api(flags);
      await api.unwrap('DELETE /threads/:id', api.http.DELETE('/api/v1/threads/{id}', { params: { path: { id } } }));
      ctx.io.out(`deleted ${id}`);
    });
}
