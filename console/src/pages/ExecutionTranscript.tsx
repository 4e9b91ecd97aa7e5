/**
 * The transcript of one execution of an agent step — the step itself, an item of a map (`each[3]`) or an iteration of
 * a loop (`draft#2`) — with the text of its model call still being written, folded from the run's event stream. The
 * same for all three: the transcript route and the live events are both keyed by the execution id.
 */
import { liveTurnsOf, type LiveTexts } from '../live-text';
import { Transcript } from './Transcript';

/** What of an execution's status decides when its transcript is read again; null when the page has not read it. */
export interface ExecutionProgress {
  status: string;
  turns?: number | null;
  attempts: number;
}

export function ExecutionTranscript({
  runId,
  execId,
  progress,
  liveText,
  title,
}: {
  runId: string;
  execId: string;
  progress: ExecutionProgress | null;
  liveText: LiveTexts;
  title?: string;
}) {
  const live = liveTurnsOf(liveText, execId);
  const endedTurns = live.filter((t) => t.ended).length;
  const version = `${progress?.status ?? '?'}:${progress?.turns ?? 0}:${progress?.attempts ?? 0}:${endedTurns}`;
  return (
    <Transcript
      // Another execution is another conversation: nothing of the previous one's pages may show under its name.
      key={execId}
      runId={runId}
      stepId={execId}
      // A turn that ended on the event stream is re-read at once: its final text replaces the live one.
      version={version}
      live={live}
      title={title}
    />
  );
}
