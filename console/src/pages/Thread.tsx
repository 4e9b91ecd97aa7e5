/**
 * A thread's chat view (docs/threads.md, docs/console.md): the conversation (GET …/threads/:id/messages), a box to
 * send the next message (POST …/messages with `after`, so a tab that has not seen the last answer is refused), and
 * the running turn live — its run's event stream (a turn is an ordinary run): the text as the model writes it, the
 * tool calls as they happen (folded; unfold for arguments and result), a tool call waiting for approval with its
 * buttons in the conversation, and a button that cancels the turn. A turn's approvals stay in the conversation, folded
 * like tool calls, with the decision.
 */
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import {
  errorMessage,
  get,
  getPage,
  post,
  type AcceptedMessage,
  type Approval,
  type Page,
  type RunEvent,
  type Thread,
  type ThreadMessage,
} from '../api';
import { followRun } from '../events';
import { ErrorNote, formatDate, formatNumber, Json, StatusBadge } from '../format';
import { useInterval, useLoad } from '../hooks';
import { applyLiveEvent, NO_LIVE_TEXT, type LiveTexts } from '../live-text';
import { Link } from '../router';

const UNFINISHED = ['queued', 'running', 'waiting'];

async function allMessages(threadId: string, signal: AbortSignal): Promise<ThreadMessage[]> {
  const out: ThreadMessage[] = [];
  let next: string | null = `/threads/${encodeURIComponent(threadId)}/messages?limit=200`;
  for (let i = 0; next && i < 50; i++) {
    const page: Page<ThreadMessage> = await getPage<ThreadMessage>(next, signal);
    out.push(...page.items);
    next = page.next;
  }
  return out;
}

function ToolCall({ name, ok, args, output }: { name: string; ok: boolean; args?: unknown; output?: unknown }) {
  return (
    <details className="tool-call" data-testid="tool-call" data-tool={name}>
      <summary>
        Tool <code>{name}</code> {ok ? 'ok' : 'failed'}
      </summary>
      {args !== undefined && (
        <>
          <h4>Arguments</h4>
          <Json value={args} label={`Arguments of ${name}`} />
        </>
      )}
      <h4>Result</h4>
      <Json value={output} label={`Result of ${name}`} />
    </details>
  );
}

function MessageView({ m }: { m: ThreadMessage }) {
  if (m.role === 'tool') {
    if (!m.tool) return null;
    return <ToolCall name={m.tool.name} ok={!m.tool.is_error} args={m.tool.args} output={m.tool.output} />;
  }
  if (m.role === 'approval') {
    if (!m.approval) return null;
    const a = m.approval;
    const outcome =
      a.status === 'requested'
        ? 'not decided'
        : `${a.status}${a.decided_at ? ` ${formatDate(a.decided_at)}` : ''}${a.comment ? `: ${a.comment}` : ''}`;
    // Folded like a tool call: the call it asked about, unfolded for its arguments.
    return (
      <details
        className="tool-call approval-note"
        data-testid="message"
        data-role="approval"
        data-message-id={m.id}
        data-status={a.status}
      >
        <summary>
          Approval of <code>{a.name}</code> {outcome}
        </summary>
        <h4>Arguments</h4>
        <Json value={a.args} label={`Arguments of the approval of ${a.name}`} />
      </details>
    );
  }
  if (m.role === 'assistant' && !m.text) return null;
  if (m.role === 'summary') {
    // What the model gets in place of the turns it covers (which stay listed above it), folded like a tool call.
    return (
      <details className="bubble summary" data-testid="message" data-role="summary" data-message-id={m.id}>
        <summary>Summary of earlier turns</summary>
        <p className="bubble-text">{m.text}</p>
      </details>
    );
  }
  return (
    <div className={`bubble ${m.role}`} data-testid="message" data-role={m.role} data-message-id={m.id}>
      <p className="bubble-text">{m.text}</p>
      {m.role === 'user' && m.status && m.status !== 'completed' && (
        <p className="bubble-status">
          <StatusBadge status={m.status} />
          {m.error && <span className="error-text"> {m.error.message}</span>}
        </p>
      )}
    </div>
  );
}

interface LiveTool {
  seq: number;
  turn: number;
  tool: string;
  ok: boolean;
  summary: string;
}

interface Waiting {
  stepId: string;
  name: string;
  message: string | null;
}

/** The running turn: its live text and tool calls in model-turn order, a waiting approval, the cancel button. */
function LiveTurn({
  threadId,
  turn,
  runId,
  onEnded,
}: {
  threadId: string;
  turn: number;
  runId: string;
  onEnded: () => void;
}) {
  const [texts, setTexts] = useState<LiveTexts>(NO_LIVE_TEXT);
  const [tools, setTools] = useState<LiveTool[]>([]);
  const [waiting, setWaiting] = useState<Waiting | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ended = useRef(onEnded);
  ended.current = onEnded;

  useEffect(() => {
    const abort = new AbortController();
    const onEvent = (event: RunEvent) => {
      setTexts((s) => applyLiveEvent(s, event));
      if (event.type === 'agent.tool_call') {
        setTools((t) =>
          t.some((x) => x.seq === event.seq)
            ? t
            : [...t, { seq: event.seq, turn: event.turn, tool: event.tool, ok: event.ok, summary: event.summary }],
        );
      } else if (event.type === 'step.waiting' && event.tool_call) {
        const stepId = event.step_id;
        setWaiting({ stepId, name: event.tool_call.name, message: null });
        get<Approval[]>('/approvals?limit=200', abort.signal).then(
          (inbox) => {
            const found = inbox.find((a) => a.run_id === runId && a.step_id === stepId);
            setWaiting((w) => (w && w.stepId === stepId ? { ...w, message: found?.message ?? null } : w));
          },
          () => undefined,
        );
      } else if (event.type === 'step.resumed') {
        setWaiting(null);
      } else if (event.type === 'run.ended') {
        ended.current();
      }
    };
    void followRun(runId, { onEvent, onError: setError }, abort.signal);
    return () => abort.abort();
  }, [runId]);

  const act = async (path: string, body: unknown) => {
    setBusy(true);
    setError(null);
    try {
      await post(path, body);
      return true;
    } catch (err) {
      setError(errorMessage(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  const decide = async (approved: boolean) => {
    if (!waiting) return;
    const runs = `/workflows/runs/${encodeURIComponent(runId)}/approve`;
    if (await act(runs, { step_id: waiting.stepId, approved })) setWaiting(null);
  };
  const cancel = () => void act(`/threads/${encodeURIComponent(threadId)}/turns/${turn}/cancel`, {});

  const modelTurns = [...new Set([...texts.turns.map((t) => t.turn), ...tools.map((t) => t.turn)])].sort(
    (a, b) => a - b,
  );
  return (
    <section className="live-turn" aria-label={`Turn ${turn}, running`} data-testid="live-turn" data-turn={turn}>
      {modelTurns.map((n) => {
        const text = texts.turns
          .filter((t) => t.turn === n)
          .map((t) => t.text)
          .join('');
        return (
          <div key={n}>
            {text && (
              <div className="bubble assistant live" data-testid="live-text" aria-live="polite">
                <p className="bubble-text">{text}</p>
              </div>
            )}
            {tools
              .filter((t) => t.turn === n)
              .map((t) => (
                <details key={t.seq} className="tool-call" data-testid="tool-call" data-tool={t.tool}>
                  <summary>
                    Tool <code>{t.tool}</code> {t.ok ? 'ok' : 'failed'}
                  </summary>
                  <p className="tool-summary">{t.summary}</p>
                </details>
              ))}
          </div>
        );
      })}
      {waiting && (
        <div className="thread-approval" role="group" aria-label="Approval" data-testid="thread-approval">
          <p>
            The agent wants to call <code>{waiting.name}</code>
            {waiting.message ? ':' : '.'}
          </p>
          {waiting.message && <p className="approval-message">{waiting.message}</p>}
          <div className="buttons">
            <button type="button" className="approve" disabled={busy} onClick={() => void decide(true)}>
              Approve
            </button>
            <button type="button" className="reject" disabled={busy} onClick={() => void decide(false)}>
              Reject
            </button>
          </div>
        </div>
      )}
      <p className="live-status">
        <span className="muted">The agent is answering…</span>{' '}
        <button type="button" onClick={cancel} disabled={busy} data-testid="cancel-turn">
          Cancel this turn
        </button>
      </p>
      <ErrorNote error={error} />
    </section>
  );
}

export function ThreadPage({ threadId }: { threadId: string }) {
  const thread = useLoad((signal) => get<Thread>(`/threads/${encodeURIComponent(threadId)}`, signal), [threadId]);
  const messages = useLoad((signal) => allMessages(threadId, signal), [threadId]);
  const [live, setLive] = useState<{ turn: number; run_id: string } | null>(null);
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Runs whose end this page has seen: a thread read before that end still names them as running.
  const endedRuns = useRef(new Set<string>());
  const reload = () => {
    thread.reload();
    messages.reload();
  };

  const running = thread.data?.running_turn ?? null;
  useEffect(() => {
    if (!live && running && !endedRuns.current.has(running.run_id)) setLive(running);
  }, [live, running]);
  // After a turn's end, the thread and its conversation are read again; until they show that end, the next message
  // would name a last message the thread has moved past (`after`), so the box waits.
  const [awaiting, setAwaiting] = useState<number | null>(null);
  const caughtUp =
    awaiting !== null &&
    thread.data !== null &&
    thread.data.running_turn?.turn !== awaiting &&
    (messages.data ?? []).some((m) => m.role === 'user' && m.turn === awaiting && !UNFINISHED.includes(m.status ?? ''));
  useEffect(() => {
    if (caughtUp) setAwaiting(null);
  }, [caughtUp]);
  // A turn queued or still being written up, or one another tab started: read again until it settles.
  const settling = !live && (messages.data ?? []).some((m) => m.role === 'user' && UNFINISHED.includes(m.status ?? ''));
  useInterval(reload, 1000, settling || (awaiting !== null && !caughtUp));
  const busy = live !== null || awaiting !== null;

  const send = async (e?: FormEvent) => {
    e?.preventDefault();
    if (!text.trim() || busy || sending) return;
    setSending(true);
    setError(null);
    try {
      const last = thread.data?.last_message_id;
      const accepted = await post<AcceptedMessage>(`/threads/${encodeURIComponent(threadId)}/messages`, {
        text,
        ...(last ? { after: last } : {}),
      });
      setText('');
      // A queued turn has no run to follow yet: the thread, read again while it waits, names it once it runs.
      if (accepted.status === 'running' || accepted.status === 'waiting') {
        setLive({ turn: accepted.turn, run_id: accepted.run_id });
      }
      reload();
    } catch (err) {
      setError(errorMessage(err));
      reload();
    } finally {
      setSending(false);
    }
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      void send();
    }
  };
  const onEnded = () => {
    if (live) {
      endedRuns.current.add(live.run_id);
      setAwaiting(live.turn);
    }
    setLive(null);
    reload();
  };

  const t = thread.data;
  return (
    <main id="main" className="thread-page" data-testid="thread-page" data-busy={busy ? 'true' : 'false'}>
      <p className="crumbs">
        <Link to="/threads">Threads</Link>
      </p>
      <h1>{t ? (t.title ?? t.id) : threadId}</h1>
      {t && (
        <p className="muted" data-testid="thread-facts">
          {t.template_name} · {formatNumber(t.turns)} turns ·{' '}
          {formatNumber(t.usage.input_tokens + t.usage.output_tokens)} tokens · <code>{t.id}</code>
        </p>
      )}
      <ErrorNote error={thread.error ?? messages.error} />
      <section className="conversation" aria-label="Conversation" data-testid="conversation">
        {(messages.data ?? [])
          // The running turn's approval is asked below, with its buttons (LiveTurn); listed once the turn has ended.
          .filter((m) => !(live && m.role === 'approval' && m.turn === live.turn))
          .map((m) => (
            <MessageView key={m.id} m={m} />
          ))}
        {live && (
          <LiveTurn key={live.run_id} threadId={threadId} turn={live.turn} runId={live.run_id} onEnded={onEnded} />
        )}
      </section>
      <form className="composer" onSubmit={(e) => void send(e)} aria-label="Send a message">
        <label htmlFor="chat-input">Your message</label>
        <textarea
          id="chat-input"
          rows={3}
          value={text}
          maxLength={32_768}
          placeholder={
            live ? 'Wait for the answer, or cancel the turn' : 'Your message (Enter sends, Shift+Enter: new line)'
          }
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKey}
          data-testid="chat-input"
        />
        <button type="submit" disabled={busy || sending || !text.trim()} data-testid="send-button">
          Send
        </button>
      </form>
      <ErrorNote error={error} />
    </main>
  );
}
