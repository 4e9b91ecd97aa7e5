/**
 * One turn of `chat` as the person sees it: the thread's event stream from the turn's first event
 * (`Last-Event-ID: <turn>.0`) to its `run.ended` — the agent's text written as it comes, each tool call on a line of
 * its own, an approval asked inline and the decision posted through the approvals API, and how the turn ended when
 * it did not complete. Ctrl-C cancels the turn (the stream then shows its end); a second Ctrl-C leaves it running.
 */
import type { ApiClient, RunEvent, RunStatus } from '../api-client';
import { CliError } from '../errors';
import { followEventStream, type SseMessage } from '../sse';
import { cleanText } from '../watch/live-text';
import type { ChatInput } from './input';
import type { ChatScreen } from './screen';

export interface TurnEnd {
  status: RunStatus;
  message: string | null;
  /** The agent's text was shown as it came (else the caller prints the stored reply). */
  textShown: boolean;
  /** The person pressed Ctrl-C twice: the chat ends, the turn is left to run. */
  abandoned: boolean;
}

type ThreadEvent = RunEvent & { thread_turn: number };

function parse(message: SseMessage): ThreadEvent | null {
  try {
    return JSON.parse(message.data) as ThreadEvent;
  } catch {
    throw new CliError(`the thread's event stream sent data that is not JSON (event id ${message.id ?? 'none'})`);
  }
}

/** The approval's message from the inbox (it names the tool and its arguments), or null when already decided. */
async function approvalMessage(api: ApiClient, runId: string, stepId: string): Promise<string | null> {
  const inbox = await api.list(
    'GET /approvals',
    (page) => api.http.GET('/api/v1/approvals', { params: { query: page } }),
    1000,
  );
  const found = inbox.find((a) => a.run_id === runId && a.step_id === stepId);
  return found ? (found.message ?? '') : null;
}

/** Asks until the answer is yes or no; null (end of input, Ctrl-C) cancels the turn. */
async function askApproval(input: ChatInput, screen: ChatScreen): Promise<boolean | null> {
  for (;;) {
    if (!input.interactive) screen.line('approve? [y/n]');
    const answer = await input.read('approve? [y/n] ');
    if (answer === null) return null;
    const word = answer.trim().toLowerCase();
    if (['y', 'yes'].includes(word)) return true;
    if (['n', 'no'].includes(word)) return false;
    screen.note('answer y or n (Ctrl-C cancels the turn)');
  }
}

export async function followTurn(
  api: ApiClient,
  input: ChatInput,
  screen: ChatScreen,
  turn: { threadId: string; turn: number; runId: string },
): Promise<TurnEnd> {
  const url = api.threadEventsUrl(turn.threadId);
  let textShown = false;
  let cancelling = false;
  let abandon!: () => void;
  const abandoned = new Promise<'abandoned'>((resolve) => (abandon = () => resolve('abandoned')));
  const cancel = async () => {
    try {
      await api.unwrap(
        'POST …/cancel',
        api.http.POST('/api/v1/threads/{id}/turns/{turn}/cancel', {
          params: { path: { id: turn.threadId, turn: turn.turn } },
        }),
      );
    } catch (err) {
      screen.note(`could not cancel turn ${turn.turn}: ${(err as Error).message}`);
    }
  };
  input.onInterrupt(() => {
    if (cancelling) return abandon();
    cancelling = true;
    screen.note(`cancelling turn ${turn.turn}… (Ctrl-C again to leave it running and end the chat)`);
    void cancel();
  });

  const follow = async (): Promise<{ status: RunStatus; message: string | null }> => {
    const messages = followEventStream({
      open: (lastEventId, signal) =>
        api.send('GET', url, {
          headers: { Accept: 'text/event-stream', 'Last-Event-ID': lastEventId ?? `${turn.turn}.0` },
          signal,
        }),
      refusal: (res) => api.failure(res, 'GET', url),
      // A later turn's event means ours is over (a turn that never ran has no run.ended of its own).
      isLast: (m) => {
        const e = parse(m);
        return e !== null && (e.thread_turn > turn.turn || (e.type === 'run.ended' && e.thread_turn === turn.turn));
      },
      onReconnect: (n) => {
        if (n.failures > 1) screen.note(`connection lost (${n.reason}); resuming`);
      },
    });
    for await (const message of messages) {
      const e = parse(message);
      if (!e) continue;
      if (e.thread_turn > turn.turn) return { status: 'cancelled', message: 'the turn did not run' };
      switch (e.type) {
        case 'agent.text.delta':
          screen.agentText(cleanText(e.text));
          textShown = true;
          break;
        case 'agent.text.void':
          screen.note('(the model call broke off; its partial answer is discarded and the answer follows again)');
          break;
        case 'agent.model_call':
          screen.endText();
          break;
        case 'agent.tool_call':
          screen.tool(`${e.tool} ${e.ok ? 'ok' : 'failed'}: ${cleanText(e.summary)}`);
          break;
        case 'step.retrying':
          screen.note(`(retrying: ${e.error.reason}: ${e.error.message})`);
          break;
        case 'step.waiting': {
          if (!e.tool_call) break;
          const asked = await approvalMessage(api, turn.runId, e.step_id);
          if (asked === null) break; // decided elsewhere meanwhile (the console, another terminal)
          screen.tool(`${e.tool_call.name} needs your approval: ${cleanText(asked)}`);
          const approved = await askApproval(input, screen);
          if (approved === null) {
            cancelling = true;
            await cancel();
            break;
          }
          try {
            await api.unwrap(
              'POST …/approve',
              api.http.POST('/api/v1/workflows/runs/{runId}/approve', {
                params: { path: { runId: turn.runId } },
                body: { step_id: e.step_id, approved },
              }),
            );
          } catch (err) {
            screen.note(`the decision was not taken: ${(err as Error).message}`);
          }
          break;
        }
        case 'step.resumed':
          screen.tool(`${e.tool_call.name} ${e.approved ? 'approved' : 'declined'}`);
          break;
        case 'run.ended':
          screen.endText();
          return { status: e.status, message: e.error?.message ?? null };
        case 'step.started':
        case 'step.completed':
        case 'step.failed':
        case 'step.skipped':
        case 'step.child_run':
        case 'step.warning':
          // The turn's one step: its end is the run's end (above), the rest is not conversation.
          break;
      }
    }
    throw new CliError(`the thread's event stream ended without the end of turn ${turn.turn}`);
  };

  try {
    const end = await Promise.race([follow(), abandoned]);
    if (end === 'abandoned') return { status: 'running', message: null, textShown, abandoned: true };
    return { ...end, textShown, abandoned: false };
  } finally {
    input.onInterrupt(null);
    screen.endText();
  }
}
