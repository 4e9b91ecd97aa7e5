/**
 * R1: every committed history of the run workflow (recorded by test/temporal/record-histories.ts) replays against
 * the current workflow code without a determinism error — and the check has teeth: a history whose recorded
 * commands no longer match what the code does (here: the recorded run's step order is changed under it, exactly what
 * an unpatched reordering of the workflow's commands looks like) fails replay.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { historyFromJson as historyFromJSON } from '../helpers/history';
import { testDataConverter } from '../helpers/stack';
import type { RunSnapshot } from '../../domain/run';
import type { ScheduledRunArgs } from '../../domain/schedule';
import { webhookDeliveryId, type WebhookRequest } from '../../domain/webhook';

const DIR = path.join(__dirname, 'histories');

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}
interface JsonHistory {
  events: {
    eventType: string;
    workflowExecutionStartedEventAttributes?: { input: { payloads: JsonPayload[] } };
    activityTaskCompletedEventAttributes?: { result?: { payloads: JsonPayload[] } };
  }[];
}

const decode = (payload: JsonPayload): unknown => JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));

function load(name: string): JsonHistory {
  return JSON.parse(fs.readFileSync(path.join(DIR, name), 'utf8')) as JsonHistory;
}

/**
 * The workflow id the history was recorded under: the code derives child ids from it (a run's webhook delivery is
 * `webhook-<run id>`), so replay must use it. A run's id is its snapshot's run_id; a delivery's follows from its run.
 */
function recordedWorkflowId(history: JsonHistory, file: string): string {
  const payload = history.events[0]?.workflowExecutionStartedEventAttributes?.input.payloads[0];
  if (!payload) return file;
  const input = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) as Partial<RunSnapshot> &
    Partial<WebhookRequest>;
  if (Array.isArray(input.steps) && input.run_id) return input.run_id;
  if (input.url && input.run_id) return webhookDeliveryId(input.run_id);
  if ((input as Partial<ScheduledRunArgs>).schedule_id) {
    // A scheduled run's id is Temporal's (action id + fire time); its first activity's answer carries it.
    for (const event of history.events) {
      const result = event.activityTaskCompletedEventAttributes?.result?.payloads[0];
      if (!result) continue;
      const verdict = decode(result) as { ok: boolean; snapshot?: RunSnapshot };
      if (verdict.snapshot) return verdict.snapshot.run_id;
      break;
    }
  }
  return file;
}

// With the suite's codec, as the worker has it: committed histories are plain JSON (they pass through), and any
// re-recorded with encryption on still replay.
const bundle = () => ({
  workflowBundle: { codePath: process.env.STEPWISE_TEST_BUNDLE! },
  dataConverter: testDataConverter(),
});

describe('replay of committed run histories', () => {
  // run-*.json are this test's; other prefixes belong to other replay tests (e.g. agent-*.json).
  const files = fs.readdirSync(DIR).filter((f) => /^run-.*\.json$/.test(f));

  it('has histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
  });

  it.each(files)('%s replays without a determinism error', async (file) => {
    const history = load(file);
    await expect(
      Worker.runReplayHistory(bundle(), historyFromJSON(history), recordedWorkflowId(history, file)),
    ).resolves.toBeUndefined();
  });

  it('fails replay when the recorded commands no longer match the code (changed step order)', async () => {
    const history = load('run-mixed-completed.json');
    const started = history.events[0]?.workflowExecutionStartedEventAttributes;
    const payload = started?.input.payloads[0];
    if (!payload) throw new Error('run-mixed-completed.json: no workflow input');
    const snapshot = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) as RunSnapshot;
    // The chain fetch → shape → pause → mail becomes pause → fetch → shape → mail: the code now starts a timer where
    // the history recorded an HTTP request's activity (what an unpatched reordering of the commands looks like).
    const step = (id: string) => snapshot.steps.find((s) => s.id === id)!;
    expect(snapshot.steps.map((s) => [s.id, s.depends_on])).toEqual([
      ['fetch', []],
      ['shape', ['fetch']],
      ['pause', ['shape']],
      ['mail', ['pause']],
    ]);
    step('pause').depends_on = [];
    step('fetch').depends_on = ['pause'];
    step('mail').depends_on = ['shape'];
    payload.data = Buffer.from(JSON.stringify(snapshot), 'utf8').toString('base64');
    const altered = historyFromJSON(history);
    await expect(Worker.runReplayHistory(bundle(), altered, 'altered')).rejects.toBeInstanceOf(
      DeterminismViolationError,
    );
  });
});
