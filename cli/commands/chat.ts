/**
 * `chat <template or thread>`: a conversation with an agent in the terminal (docs/threads.md "In the terminal").
 * Given a template it starts a thread; given a thread (`thr_…`) it resumes it, showing the recent conversation
 * first. Each line read is a message (a turn): its reply is shown as it is written (./../chat/turn.ts). Ctrl-C during
 * a turn cancels the turn; Ctrl-C at the prompt or Ctrl-D ends the chat and prints how to resume it. With stdin not
 * a terminal, the lines of stdin are the messages, one turn after the other, and the exit code is 1 when a turn did
 * not complete.
 */
import type { Command } from 'commander';
import { ApiRequestError, type ApiClient } from '../api-client';
import { chatInput } from '../chat/input';
import { chatScreen, type ChatScreen } from '../chat/screen';
import { followTurn } from '../chat/turn';
import type { ApiFlags, CliContext } from '../context';
import { CliError } from '../errors';
import { wholeNumber, withApiFlags } from './api-flags';
import { createThread, getThread, messageLines, threadMessages, type ThreadItem } from './threads';

type ChatFlags = ApiFlags & { title?: string; history: string };

/** Refusals of a message the person can act on (a running turn, a budget, a too long text): the chat goes on. */
const RECOVERABLE = new Set([400, 409, 413, 422, 429]);

/** The turn's stored reply, for a reply that was not streamed (a provider that answered in one piece). */
async function printReply(api: ApiClient, screen: ChatScreen, threadId: string, turn: number): Promise<void> {
  const all = await threadMessages(api, threadId);
  const reply = all.find((m) => m.turn === turn && m.role === 'assistant' && m.final);
  if (reply?.text) screen.agentText(reply.text);
  screen.endText();
}

async function showRecent(api: ApiClient, screen: ChatScreen, thread: ThreadItem, count: number): Promise<void> {
  const all = await threadMessages(api, thread.id);
  const shown = all.slice(-count);
  if (all.length > shown.length)
    screen.note(`… ${all.length - shown.length} earlier messages (threads messages ${thread.id})`);
  for (const m of shown) for (const line of messageLines(m)) screen.line(line);
}

export function registerChatCommand(program: Command, ctx: CliContext): void {
  withApiFlags(program.command('chat'))
    .description(
      'talk with an agent: a new thread on a template (id or name), or resume a thread (thr_…); Ctrl-C cancels a ' +
        'turn, Ctrl-D ends the chat. Not on a terminal, the lines of stdin are the messages',
    )
    .argument('<template-or-thread>', 'an agent template (tpl_… or its name), or a thread to resume (thr_…)')
    .option('--title <title>', 'the new thread’s title')
    .option('--history <n>', 'messages of a resumed thread shown first', '10')
    .action(async (target: string, flags: ChatFlags) => {
      const source = ctx.io.input;
      if (!source) throw new CliError('chat needs stdin');
      const history = wholeNumber('--history', flags.history, 10_000);
      const api = ctx.api(flags);
      const screen = chatScreen(ctx.io);
      const resume = /^thr_/.test(target);
      const thread = resume ? await getThread(api, target) : await createThread(api, target, flags.title);
      if (resume) {
        screen.note(`Thread ${thread.id} with ${thread.template_name}${thread.title ? `: ${thread.title}` : ''}`);
        await showRecent(api, screen, thread, history);
      } else screen.note(`New thread ${thread.id} with ${thread.template_name}`);
      if (source.isTTY) screen.note('Ctrl-C cancels a turn; Ctrl-D (or Ctrl-C at the prompt) ends the chat.');

      const input = chatInput(source, ctx.io.terminal?.stream);
      let incomplete = 0;
      // The last message this chat has seen, sent as `after`: when another client answered meanwhile, the thread
      // refuses the message (409 stale_after) instead of answering a conversation this chat did not show.
      let last = thread.last_message_id;
      const refresh = async (ended?: number) => {
        // A turn's end is written just after its run's end is streamed: until the thread shows it, it is not the last.
        for (let tries = 0; ; tries++) {
          const now = await getThread(api, thread.id);
          last = now.last_message_id;
          if (ended === undefined || now.running_turn?.turn !== ended || tries >= 100) return;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      const turn = async (n: number, runId: string): Promise<boolean> => {
        const end = await followTurn(api, input, screen, { threadId: thread.id, turn: n, runId });
        if (end.abandoned) return false;
        if (end.status === 'completed') {
          if (!end.textShown) await printReply(api, screen, thread.id, n);
        } else {
          incomplete++;
          screen.note(`turn ${n} ${end.status}${end.message ? `: ${end.message}` : ''}`);
        }
        return true;
      };
      try {
        if (thread.running_turn) {
          screen.note(`turn ${thread.running_turn.turn} is running; its answer follows`);
          if (!(await turn(thread.running_turn.turn, thread.running_turn.run_id))) return;
          await refresh(thread.running_turn.turn);
        }
        for (;;) {
          const line = await input.read('you> ');
          if (line === null) break;
          if (!line.trim()) continue;
          if (!input.interactive) screen.line(`you> ${line}`);
          let accepted;
          try {
            const answer = api.http.POST('/api/v1/threads/{id}/messages', {
              params: { path: { id: thread.id } },
              body: { text: line, ...(last ? { after: last } : {}) },
            });
            accepted = (await api.unwrap('POST …/messages', answer)).data;
          } catch (err) {
            if (!(err instanceof ApiRequestError) || !RECOVERABLE.has(err.status)) throw err;
            incomplete++;
            screen.note(`not sent: ${err.message}`);
            if (err.code === 'stale_after') {
              screen.note(`the thread moved on (another client): npm run cli -- threads messages ${thread.id}`);
              await refresh();
            }
            continue;
          }
          if (accepted.status === 'queued') screen.note(`turn ${accepted.turn} is queued behind the running one`);
          if (['queued', 'running', 'waiting'].includes(accepted.status)) {
            if (!(await turn(accepted.turn, accepted.run_id))) break;
            await refresh(accepted.turn);
          } else if (accepted.reply?.text) screen.agentText(accepted.reply.text);
          else {
            incomplete++;
            screen.note(`turn ${accepted.turn} ${accepted.status}`);
          }
          if (!['queued', 'running', 'waiting'].includes(accepted.status)) await refresh();
          screen.endText();
        }
      } finally {
        input.close();
        screen.note(`Thread ${thread.id}. Resume it with: npm run cli -- chat ${thread.id}`);
      }
      if (!source.isTTY && incomplete > 0) ctx.exitCode = 1;
    });
}
