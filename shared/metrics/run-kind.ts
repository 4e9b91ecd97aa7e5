/** The workflow kind label of the run metrics: a run with any agent step is `agent`, otherwise `action_only`. */
export type RunKind = 'agent' | 'action_only';

export function runKindOf(steps: readonly { kind: string }[]): RunKind {
  return steps.some((s) => s.kind === 'agent') ? 'agent' : 'action_only';
}
