/**
 * An agent's conversation, turn by turn (GET …/steps/:stepId/transcript, paged by entries, where `stepId` is the
 * execution: the step, a map item or a loop iteration), and after it the text of a model call still being written
 * (from the event stream), until the transcript has that turn.
 */
import { useEffect, useState } from 'react';
import { errorMessage, getPage, type Transcript as TranscriptBody, type TranscriptEntry } from '../api';
import { ErrorNote, Json } from '../format';
import type { LiveTurn } from '../live-text';

export function Transcript({
  runId,
  stepId,
  version,
  live,
  title = 'Transcript',
}: {
  runId: string;
  stepId: string;
  version: string;
  live: LiveTurn[];
  title?: string;
}) {
  const [head, setHead] = useState<TranscriptBody | null>(null);
  const [entries, setEntries] = useState<TranscriptEntry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);

  // The transcript body is one object whose `entries` are paged: each page repeats the setup fields.
  useEffect(() => {
    const abort = new AbortController();
    const path = `/workflows/runs/${encodeURIComponent(runId)}/steps/${encodeURIComponent(stepId)}/transcript`;
    getPageOf(path, abort.signal).then(
      (page) => {
        setHead(page.body);
        setEntries(page.body.entries);
        setNext(page.next);
        setError(null);
      },
      (err: unknown) => {
        if (!abort.signal.aborted) setError(errorMessage(err));
      },
    );
    return () => abort.abort();
  }, [runId, stepId, version]);

  const more = async () => {
    if (!next) return;
    setLoadingMore(true);
    try {
      const page = await getPageOf(next);
      setEntries((e) => [...e, ...page.body.entries]);
      setNext(page.next);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setLoadingMore(false);
    }
  };

  // The transcript's text is authoritative: a live turn shows until the transcript read has its model entry. With
  // pages not loaded yet, an ended turn may sit on one of them: only a turn still being written shows then.
  const written = new Set(entries.flatMap((e) => (e.role === 'assistant' ? [e.turn] : [])));
  const liveShown = live.filter((t) => !written.has(t.turn) && (!t.ended || next === null));

  return (
    <section aria-labelledby="transcript-title" data-testid="transcript" data-exec-id={stepId}>
      <h3 id="transcript-title">{title}</h3>
      <ErrorNote error={error} />
      {head && (
        <p className="muted">
          {head.model ?? 'default model'} · {head.turns ?? 0} turn{head.turns === 1 ? '' : 's'} · tools:{' '}
          {head.tools.length ? head.tools.join(', ') : 'none'}
        </p>
      )}
      {head?.system_prompt && (
        <details>
          <summary>System prompt</summary>
          <pre className="json">{head.system_prompt}</pre>
        </details>
      )}
      {head && entries.length === 0 && liveShown.length === 0 && <p className="empty">No turns yet.</p>}
      <ol className="transcript">
        {entries.map((e) => (
          <Entry key={e.seq} entry={e} />
        ))}
        {liveShown.map((t) => (
          <LiveEntry key={t.turn} turn={t} />
        ))}
      </ol>
      {next && (
        <button type="button" onClick={() => void more()} disabled={loadingMore}>
          Load more turns
        </button>
      )}
      {head?.final_answer && (
        <>
          <h4>Final answer</h4>
          <pre className="json" data-testid="final-answer">
            {head.final_answer}
          </pre>
        </>
      )}
    </section>
  );
}

async function getPageOf(path: string, signal?: AbortSignal): Promise<{ body: TranscriptBody; next: string | null }> {
  // getPage types `data` as a list; the transcript's data is one object.
  const page = await getPage<unknown>(path, signal);
  return { body: page.items as unknown as TranscriptBody, next: page.next };
}

/** A model call's text as it is written; `aria-busy` until it ends (a screen reader need not read every delta). */
function LiveEntry({ turn }: { turn: LiveTurn }) {
  return (
    <li
      className="entry entry-assistant entry-live"
      data-testid="live-text"
      data-turn={turn.turn}
      data-attempt={turn.attempt}
      aria-busy={!turn.ended}
    >
      <h4>
        Turn {turn.turn}: model <span className="muted">· {turn.ended ? 'done' : 'writing…'}</span>
      </h4>
      {turn.voided !== null && (
        <p className="muted" data-testid="live-text-voided">
          Attempt {turn.voided} failed: its partial text was discarded. Attempt {turn.attempt}:
        </p>
      )}
      <pre className="json">{turn.text}</pre>
    </li>
  );
}

function Entry({ entry }: { entry: TranscriptEntry }) {
  switch (entry.role) {
    case 'user':
      return (
        <li className="entry entry-user" data-testid="transcript-entry" data-role="user">
          <h4>{entry.repair ? 'Repair request' : 'User message'}</h4>
          <pre className="json">{entry.text}</pre>
        </li>
      );
    case 'assistant':
      return (
        <li className="entry entry-assistant" data-testid="transcript-entry" data-role="assistant">
          <h4>
            Turn {entry.turn}: model{entry.final ? ' (final answer)' : ''}
            <span className="muted">
              {' '}
              · {entry.usage.input_tokens} in / {entry.usage.output_tokens} out · {entry.finish_reason}
            </span>
          </h4>
          {entry.text && <pre className="json">{entry.text}</pre>}
          {entry.tool_calls.length > 0 && (
            <ul className="tool-calls">
              {entry.tool_calls.map((c) => (
                <li key={c.id} data-testid="tool-call">
                  Calls <strong>{c.name}</strong>
                  <Json value={c.invalid_args ?? c.args} label={`Arguments of ${c.name}`} />
                </li>
              ))}
            </ul>
          )}
        </li>
      );
    case 'tool':
      return (
        <li
          className={`entry entry-tool${entry.is_error ? ' entry-error' : ''}`}
          data-testid="transcript-entry"
          data-role="tool"
        >
          <h4>
            Turn {entry.turn}: tool <strong>{entry.name}</strong> {entry.is_error ? '— error' : '— result'}
            {entry.error_code && <span className="muted"> ({entry.error_code})</span>}
            {entry.truncated && <span className="muted"> (cut)</span>}
          </h4>
          <Json value={entry.result} label={`Result of ${entry.name}`} />
        </li>
      );
  }
}
