/** The one derivation of run-level state (domain/run-state.ts), as the workflow, the view and the reconciler use it. */
import { deriveOutcome, deriveRunStatus } from '../../domain/run-state';
import type { StepStatus } from '../../domain/run';

const steps = (...statuses: StepStatus[]) => statuses.map((status, i) => ({ id: `s${i}`, status }));

describe('deriveRunStatus', () => {
  it.each([
    ['queued', steps('pending', 'pending'), 'queued'],
    ['running', steps('completed', 'pending'), 'running'],
    ['running', steps('running', 'waiting'), 'running'],
    ['running', steps('completed', 'waiting', 'skipped'), 'waiting'],
    ['queued', steps('waiting'), 'waiting'],
    ['failed', steps('running'), 'failed'],
    ['completed', steps('pending'), 'completed'],
  ] as const)('stored %s with %j → %s', (stored, s, expected) => {
    expect(deriveRunStatus(stored, s)).toBe(expected);
  });
});

describe('deriveOutcome', () => {
  it('a failure: the failing step carries the error, running branches are stopped, the rest skipped', () => {
    const error = { step_id: 's1', reason: 'non_retryable', message: 'boom', code: 'http_4xx' };
    const outcome = deriveOutcome(steps('completed', 'failed', 'running', 'pending'), { kind: 'failed', error });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBe(error);
    expect(outcome.stepUpdates).toEqual([
      { id: 's1', status: 'failed', error: { reason: 'non_retryable', message: 'boom', code: 'http_4xx' } },
      { id: 's2', status: 'failed', error: { reason: 'cancelled', message: 'stopped: step "s1" failed the run' } },
      { id: 's3', status: 'skipped', skip_reason: 'the run failed before this step ran' },
    ]);
  });

  it('a cancellation names the first started step, as the straight-line workflow did', () => {
    const outcome = deriveOutcome(steps('completed', 'running', 'pending'), { kind: 'cancelled' });
    expect(outcome).toMatchObject({ status: 'cancelled', error: { step_id: 's1', reason: 'cancelled' } });
    expect(outcome.stepUpdates?.[0]).toEqual({
      id: 's1',
      status: 'failed',
      error: { reason: 'cancelled', message: 'cancelled' },
    });
    expect(deriveOutcome(steps('pending'), { kind: 'cancelled', stepId: null }).error?.step_id).toBeNull();
  });

  it('timed out, terminated and never started', () => {
    expect(deriveOutcome(steps('running'), { kind: 'timed_out' })).toMatchObject({
      status: 'timed_out',
      error: { reason: 'timeout' },
      stepUpdates: [{ id: 's0', status: 'failed', error: { reason: 'timeout' } }],
    });
    expect(deriveOutcome(steps('waiting'), { kind: 'terminated' }).status).toBe('failed');
    expect(deriveOutcome(steps('pending', 'pending'), { kind: 'not_started' })).toMatchObject({
      status: 'failed',
      error: { step_id: null, reason: 'not_started' },
      stepUpdates: [
        { id: 's0', status: 'skipped' },
        { id: 's1', status: 'skipped' },
      ],
    });
  });

  it('a completed run keeps skipped and failed-and-continued steps as they are', () => {
    expect(
      deriveOutcome(steps('completed', 'skipped', 'failed', 'running'), { kind: 'completed' }).stepUpdates,
    ).toEqual([
      { id: 's0', status: 'completed' },
      { id: 's1', status: 'skipped' },
      { id: 's2', status: 'failed' },
      { id: 's3', status: 'completed' },
    ]);
  });
});
