/**
 * The contract between the run workflow and the agent step: the run workflow's `case 'agent'` calls
 * `runAgentStep(step, input, ctx)` from temporal/workflows/agent-step.ts and records the outcome like any other step.
 * Workflow-safe: types and constants only.
 */
import type { ApprovalDecision } from './messages';
import type { JsonValue } from './json';
import type { OutputRef, RunBudget, Usage } from './run';

/** Turn limit of an agent step when neither its template nor the step sets one. */
export const DEFAULT_MAX_TURNS = 8;

/**
 * A model reference, `provider:model`, wherever one is written (templates, workflow steps, rerun overrides): the
 * name's characters are those of real model ids (`gpt-4o-mini`, `llama3.2:8b`, `org/model@rev`), never a control
 * character or a space that would end up in a provider request or a log line.
 */
export const MODEL_REF_PATTERN = /^(openai|anthropic|compat):[A-Za-z0-9._:/@-]+$/;
export const MODEL_REF_MESSAGE = 'must be provider:model with provider openai, anthropic or compat';

/** Where the agent step runs: its activities use these to write progress into the run projection (db/step-states.ts). */
export interface AgentStepContext {
  runId: string;
  stepId: string;
  /** The run's owner: model calls count against this user's daily token budget. */
  ownerId: string;
  /** The run's spending so far, shared by all its agent steps (the loop adds each call and checks the budget). */
  spend: RunSpend;
  /** Called with each answered call's usage: the run counts every step's calls, also of steps that fail. */
  onCall?: (usage: Usage) => void;
  /** In a sub-workflow's run: each call is reserved at the top-level run too (temporal/workflows/budget-share.ts). */
  shared?: SharedBudget;
  /**
   * Waits for the owner's decision on one tool call of this execution (temporal/workflows/approvals.ts): `announce`
   * lists the approval in the inbox once the run accepts a decision for it. One decision at a time per execution.
   */
  awaitDecision?: (announce: () => Promise<unknown>) => Promise<ApprovalDecision>;
}

/**
 * Model calls and tokens a run has used so far, kept in workflow state: rebuilt from history on replay, so a crash
 * cannot reset it. Without `budget` (runs from before budgets) nothing is checked.
 */
export interface RunSpend {
  budget?: RunBudget;
  /** Calls reserved or made (a call that failed gave its reservation back). */
  model_calls: number;
  tokens: number;
  /** Reserved calls that have not answered or failed yet. */
  in_flight: number;
}

/** The top-level run's budget, as a sub-workflow's run reaches it. */
export interface SharedBudget {
  /** Reserves the call `key` there: null when granted, else why it was refused. */
  reserve(key: string): Promise<string | null>;
  /** What the reserved call `key` used; `released`: it failed without an answer, and the call is given back. */
  settle(key: string, tokens: number, released: boolean): Promise<void>;
}

/** What an agent step hands back to the run workflow. */
export interface AgentStepOutcome {
  /** The final answer; a reference when it is larger than OUTPUT_INLINE_LIMIT_BYTES. */
  output: JsonValue | OutputRef;
  /** LLM usage of the whole step (summed over its model calls). */
  usage: Usage;
  /** Model turns the loop took. */
  turns: number;
}
