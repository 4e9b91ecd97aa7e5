/**
 * A three-step run (fetch → draft, an agent step that retries once → notify) as the API documents it: the status
 * body `runs watch` starts from and the events its stream sends (spec "Event stream").
 */
import type { RunStatus } from '../../cli/api-client';
import type { WatchStart } from '../../cli/watch/state';

export const RUN_ID = 'run_fixture0000001';

const at = (second: number) => new Date(Date.UTC(2026, 0, 2, 3, 4, second)).toISOString();
const base = (seq: number, second: number) => ({ seq, run_id: RUN_ID, at: at(second) });
const step = (id: string) => ({ exec_id: id, step_id: id });
const zeroUsage = { llm_calls: 0, input_tokens: 0, output_tokens: 0 };

export function statusBody(status: RunStatus = 'queued'): WatchStart & Record<string, unknown> {
  const s = (id: string) => ({
    id,
    status: 'pending' as const,
    attempts: 0,
    usage: zeroUsage,
    started_at: null,
    completed_at: null,
  });
  return {
    run_id: RUN_ID,
    workflow_id: 'wf_fixture00000001',
    workflow_name: 'Daily digest',
    status,
    steps: [s('fetch'), s('draft'), s('notify')],
    error: null,
    usage: zeroUsage,
  };
}

export function runEvents(end: 'completed' | 'failed' = 'completed') {
  const middle = [
    { ...base(1, 0), type: 'step.started', ...step('fetch'), attempt: 1 },
    { ...base(2, 1), type: 'step.completed', ...step('fetch'), output: { items: 3 } },
    { ...base(3, 2), type: 'step.started', ...step('draft'), attempt: 1 },
    {
      ...base(4, 4),
      type: 'agent.model_call',
      ...step('draft'),
      turn: 1,
      usage: { input_tokens: 100, output_tokens: 20 },
      tool_calls: 1,
    },
    {
      ...base(5, 5),
      type: 'agent.tool_call',
      ...step('draft'),
      turn: 1,
      tool: 'http_fetch',
      ok: true,
      summary: '200 OK',
    },
    {
      ...base(6, 6),
      type: 'step.retrying',
      ...step('draft'),
      attempt: 1,
      error: { reason: 'llm_unavailable', message: 'model overloaded' },
    },
    { ...base(7, 8), type: 'step.started', ...step('draft'), attempt: 2 },
  ];
  if (end === 'failed') {
    return [
      ...middle,
      { ...base(8, 9), type: 'step.failed', ...step('draft'), error: { reason: 'llm_auth', message: 'bad key' } },
      { ...base(9, 9), type: 'step.skipped', ...step('notify'), reason: 'an earlier step failed' },
      {
        ...base(10, 10),
        type: 'run.ended',
        status: 'failed',
        error: { step_id: 'draft', reason: 'llm_auth', message: 'bad key' },
        usage: { llm_calls: 1, input_tokens: 100, output_tokens: 20 },
        steps: [
          { id: 'fetch', status: 'completed' },
          { id: 'draft', status: 'failed' },
          { id: 'notify', status: 'skipped' },
        ],
      },
    ];
  }
  return [
    ...middle,
    {
      ...base(8, 12),
      type: 'step.completed',
      ...step('draft'),
      output: 'Dear team…',
      usage: { llm_calls: 2, input_tokens: 300, output_tokens: 50 },
    },
    { ...base(9, 13), type: 'step.started', ...step('notify'), attempt: 1 },
    { ...base(10, 14), type: 'step.completed', ...step('notify'), output: { sent: true } },
    {
      ...base(11, 15),
      type: 'run.ended',
      status: 'completed',
      error: null,
      usage: { llm_calls: 2, input_tokens: 300, output_tokens: 50 },
      steps: [
        { id: 'fetch', status: 'completed' },
        { id: 'draft', status: 'completed' },
        { id: 'notify', status: 'completed' },
      ],
    },
  ];
}
