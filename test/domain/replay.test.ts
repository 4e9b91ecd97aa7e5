/**
 * The replay plan (domain/replay.ts): which steps of a target are answered from a recorded run and which run again,
 * and the side-effect refusal. Pure: step snapshots in, plan out.
 */
import { planReplay, replayDiff, replaySideEffect, type RecordedStep } from '../../domain/replay';
import type { JsonValue } from '../../domain/json';
import type { StepSnapshot } from '../../domain/run';

const retry = { max_attempts: 3 };
const agent = (id: string, depends_on: string[], prompt = 'Answer.'): StepSnapshot => ({
  id,
  kind: 'agent',
  template_id: 'tpl_agent',
  template_name: 'Agent',
  input: null,
  retry,
  timeout_seconds: 60,
  depends_on,
  prompt,
  tasks: [],
  tools: [],
  model: 'openai:gpt-test',
  max_turns: 5,
});
const post = (id: string, depends_on: string[]): StepSnapshot => ({
  id,
  kind: 'action',
  template_id: 'tpl_http',
  template_name: 'HTTP',
  input: null,
  retry,
  timeout_seconds: 60,
  depends_on,
  action_type: 'http_request',
  config: { url: 'http://127.0.0.1:1/hook', method: 'POST' },
});
const done = (...ids: string[]): RecordedStep[] => ids.map((id) => ({ id, status: 'completed', has_output: true }));

describe('planReplay', () => {
  const recordedSteps = [agent('a', []), agent('b', ['a']), post('c', ['b'])];

  it('reuses every step of an unchanged target; a renamed template is the same step', () => {
    const target = recordedSteps.map((s) => ({ ...s, template_name: 'Renamed' }));
    const plan = planReplay({ target, recordedSteps, recorded: done('a', 'b', 'c'), inputChanged: false });
    expect(plan).toEqual({ reused: ['a', 'b', 'c'], executed: [] });
    expect(replaySideEffect(target, plan)).toBeUndefined();
  });

  it('runs a changed step and its downstream again, and refuses the side effect downstream of it', () => {
    const target = [agent('a', []), agent('b', ['a'], 'Answer better.'), post('c', ['b'])];
    const plan = planReplay({ target, recordedSteps, recorded: done('a', 'b', 'c'), inputChanged: false });
    expect(plan.reused).toEqual(['a']);
    expect(plan.executed).toEqual([
      { step_id: 'b', reason: 'its definition changed' },
      { step_id: 'c', reason: 'it depends on "b", which runs again' },
    ]);
    expect(replaySideEffect(target, plan)).toContain('step "c" has a side effect');
  });

  it('reproduces a recorded skip, and runs a step the record has no output for', () => {
    const recorded: RecordedStep[] = [
      { id: 'a', status: 'failed', has_output: false },
      { id: 'b', status: 'skipped', has_output: false },
      { id: 'c', status: 'skipped', has_output: false },
    ];
    const target = [agent('a', []), agent('b', []), post('c', ['b'])];
    const plan = planReplay({ target, recordedSteps: target, recorded, inputChanged: false });
    // `c` is skipped again (its dependency is): no side effect is sent.
    expect(plan).toEqual({
      reused: [],
      executed: [{ step_id: 'a', reason: 'the recorded run has no output for it (failed)' }],
    });
    expect(replaySideEffect(target, plan)).toBeUndefined();
  });

  it("runs everything again when the item's input differs from the recorded run's", () => {
    const plan = planReplay({
      target: recordedSteps,
      recordedSteps,
      recorded: done('a', 'b', 'c'),
      inputChanged: true,
    });
    expect(plan.reused).toEqual([]);
    expect(replaySideEffect(recordedSteps, plan)).toContain("the item's input differs");
  });

  it('finds a side effect inside a sub-workflow step that runs again', () => {
    const child: StepSnapshot = {
      id: 'sub',
      kind: 'workflow',
      template_id: 'wf_child',
      template_name: 'Child',
      input: {},
      retry,
      timeout_seconds: 60,
      depends_on: [],
      workflow: { workflow_id: 'wf_child', workflow_name: 'Child', steps: [post('hook', [])] },
    };
    const plan = planReplay({ target: [child], recordedSteps: [], recorded: [], inputChanged: false });
    expect(replaySideEffect([child], plan)).toContain(`step "sub" (its sub-workflow's step "hook")`);
  });
});

describe('replayDiff', () => {
  it('names replayed and executed steps and shows what an executed one changed', () => {
    const diff = replayDiff(
      'run_src',
      [
        { id: 'a', status: 'completed', replayed: true, output: 1 },
        { id: 'b', status: 'completed', replayed: false, output: 'new' },
        { id: 'c', status: 'completed', replayed: false, output: { same: true } },
        { id: 'd', status: 'skipped', replayed: false, output: undefined },
      ],
      new Map<string, JsonValue>([
        ['a', 1],
        ['b', 'old'],
        ['c', { same: true }],
      ]),
    );
    expect(diff.steps).toEqual([
      { step_id: 'a', how: 'replayed', changed: null },
      { step_id: 'b', how: 'executed', changed: true, recorded: 'old', output: 'new' },
      { step_id: 'c', how: 'executed', changed: false },
      { step_id: 'd', how: 'skipped', changed: null },
    ]);
  });
});
