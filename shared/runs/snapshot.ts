/**
 * Resolves a workflow and its templates into the immutable RunSnapshot that is the run workflow's input: later edits
 * of the workflow or its templates never change a run in flight, and the workflow never reads a DB document.
 */
import type { Config } from '../../config';
import type { McpServerDoc } from '../../db/mcp-servers';
import type { TemplateDoc } from '../../db/templates';
import type { WorkflowDoc, WorkflowStepDoc } from '../../db/workflows';
import { DEFAULT_MAX_TURNS } from '../../domain/agent';
import { getActionDeclaration } from '../../domain/actions/catalog';
import { resolveEgress } from '../../domain/egress';
import type { JsonObject } from '../../domain/json';
import { stdioServerKey, type McpServerSelection } from '../../domain/mcp';
import { resolveDependencies } from '../../domain/graph';
import type {
  ActionStepSnapshot,
  ChildWorkflowSnapshot,
  GraphLimits,
  RetrySettings,
  RunSnapshot,
  StepSnapshot,
} from '../../domain/run';
import { effectiveBudget, type BudgetConfig } from './budget';

/** A sub-workflow step's per-attempt limit is not used (a child run has its own); this bounds its whole run. */
export const DEFAULT_SUBWORKFLOW_TIMEOUT_SECONDS = 24 * 3600;
export const DEFAULT_MAP_CONCURRENCY = 5;

export type SnapshotConfig = Pick<
  Config,
  'LLM_DEFAULT_MODEL' | 'MAP_MAX_ITEMS' | 'MAP_MAX_CONCURRENCY' | 'LOOP_MAX_ITERATIONS' | 'SUBWORKFLOW_MAX_DEPTH'
> &
  BudgetConfig;

/** What the steps of a run refer to: templates by id, and the sub-workflows (loaded by sub-workflows.ts). */
export interface SnapshotSources {
  templates: Map<string, TemplateDoc>;
  workflows: Map<string, WorkflowDoc>;
  /** The owner's MCP servers the agent steps name, by id (absent: none are named). */
  mcpServers?: Map<string, Pick<McpServerDoc, '_id' | 'name' | 'url' | 'allowed_tools'>>;
}

/** Snapshots above this are refused: Temporal warns about payloads from 256 KiB on, and histories keep them. */
export const MAX_SNAPSHOT_BYTES = 200 * 1024;

export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_ACTION_TIMEOUT_SECONDS = 60;
export const DEFAULT_AGENT_TIMEOUT_SECONDS = 300;

export function buildSnapshot(args: {
  runId: string;
  workflow: WorkflowDoc;
  sources: SnapshotSources;
  input: JsonObject;
  config: SnapshotConfig;
  now: Date;
  /** The run's completion webhook (the start body's, else the workflow config's), already checked. */
  callbackUrl?: string;
}): RunSnapshot {
  const { workflow } = args;
  const limits: GraphLimits = {
    map_max_items: args.config.MAP_MAX_ITEMS,
    map_max_concurrency: args.config.MAP_MAX_CONCURRENCY,
    loop_max_iterations: args.config.LOOP_MAX_ITERATIONS,
    max_depth: args.config.SUBWORKFLOW_MAX_DEPTH,
  };
  return {
    run_id: args.runId,
    workflow_id: workflow._id,
    workflow_name: workflow.name,
    owner_id: workflow.owner_id,
    input: args.input,
    steps: stepSnapshots(workflow, args.sources, args.config),
    budget: effectiveBudget(args.config, workflow.config),
    created_at: args.now.toISOString(),
    limits,
    callback_url: args.callbackUrl ?? null,
  };
}

/**
 * The steps of a workflow as a run takes them: dependencies resolved (the "previous step" default filled in, so a
 * snapshot never depends on how the list was written), graph fields with their defaults, sub-workflows inlined.
 */
function stepSnapshots(workflow: WorkflowDoc, sources: SnapshotSources, config: SnapshotConfig): StepSnapshot[] {
  const deps = resolveDependencies(workflow.steps);
  return workflow.steps.map((step) => ({
    ...stepSnapshot(step, sources, workflow, config),
    ...graphFields(step, deps.get(step.id) ?? []),
  }));
}

function graphFields(
  step: WorkflowStepDoc,
  dependsOn: string[],
): Pick<ActionStepSnapshot, 'depends_on' | 'when' | 'trigger' | 'on_error' | 'map' | 'loop'> {
  return {
    depends_on: dependsOn,
    ...(step.when !== undefined ? { when: step.when } : {}),
    ...(step.trigger !== undefined ? { trigger: step.trigger } : {}),
    ...(step.on_error !== undefined ? { on_error: step.on_error } : {}),
    ...(step.map
      ? {
          map: {
            over: step.map.over.trim(),
            concurrency: step.map.concurrency ?? DEFAULT_MAP_CONCURRENCY,
            on_item_error: step.map.on_item_error ?? 'fail',
          },
        }
      : {}),
    ...(step.loop ? { loop: { until: step.loop.until, max_iterations: step.loop.max_iterations } } : {}),
  };
}

function templateOf(templates: Map<string, TemplateDoc>, step: WorkflowStepDoc): TemplateDoc {
  const t = step.template_id ? templates.get(step.template_id) : undefined;
  // The start command checked the templates just before with the same map: a missing one is a programming error.
  if (!t) throw new Error(`template ${step.template_id} of step ${step.id} not resolved`);
  return t;
}

function childSnapshot(step: WorkflowStepDoc, sources: SnapshotSources, config: SnapshotConfig): ChildWorkflowSnapshot {
  const child = step.workflow_id ? sources.workflows.get(step.workflow_id) : undefined;
  // Loaded (and checked for cycles and depth) by the start command just before.
  if (!child) throw new Error(`workflow ${step.workflow_id} of step ${step.id} not resolved`);
  return {
    workflow_id: child._id,
    workflow_name: child.name,
    ...(child.config.input_schema ? { input_schema: child.config.input_schema } : {}),
    steps: stepSnapshots(child, sources, config),
    ...(child.config.timeout_seconds ? { timeout_seconds: child.config.timeout_seconds } : {}),
  };
}

function stepSnapshot(
  step: WorkflowStepDoc,
  sources: SnapshotSources,
  workflow: WorkflowDoc,
  config: SnapshotConfig,
): StepSnapshot {
  const retry: RetrySettings = step.retry ?? workflow.config.retry ?? { max_attempts: DEFAULT_MAX_ATTEMPTS };
  if (step.workflow_id !== undefined) {
    const child = childSnapshot(step, sources, config);
    return {
      id: step.id,
      kind: 'workflow',
      template_id: child.workflow_id,
      template_name: child.workflow_name,
      input: step.input ?? {},
      retry,
      timeout_seconds: step.timeout_seconds ?? child.timeout_seconds ?? DEFAULT_SUBWORKFLOW_TIMEOUT_SECONDS,
      workflow: child,
    };
  }
  const template = templateOf(sources.templates, step);
  const base = {
    id: step.id,
    template_id: template._id,
    template_name: template.name,
    input: step.input ?? null,
    retry,
  };
  if (template.step_type === 'action' && template.action_type) {
    return {
      ...base,
      kind: 'action',
      action_type: template.action_type,
      config: { ...template.config, ...(step.config ?? {}) },
      ...(getActionDeclaration(template.action_type).effect === 'pure' ? { pure: true as const } : {}),
      timeout_seconds: step.timeout_seconds ?? workflow.config.step_timeout_seconds ?? DEFAULT_ACTION_TIMEOUT_SECONDS,
    };
  }
  const outputSchema = step.output_schema ?? template.output_schema;
  const mcpTools = mcpSelections(step.mcp_tools ?? template.mcp_tools ?? [], sources);
  return {
    ...base,
    kind: 'agent',
    prompt: step.prompt ?? template.default_prompt,
    tasks: step.tasks ?? template.default_tasks,
    tools: step.tools ?? template.default_tools,
    model: step.model ?? template.model ?? config.LLM_DEFAULT_MODEL,
    max_turns: step.max_turns ?? template.max_turns ?? DEFAULT_MAX_TURNS,
    egress: resolveEgress(template.egress, step.egress),
    ...(outputSchema ? { output_schema: outputSchema } : {}),
    ...(mcpTools.length > 0 ? { mcp_tools: mcpTools } : {}),
    ...(step.thread !== undefined ? { in_thread: step.thread } : {}),
    ...(typeof template.config.temperature === 'number' ? { temperature: template.config.temperature } : {}),
    ...(typeof template.config.max_output_tokens === 'number'
      ? { max_output_tokens: template.config.max_output_tokens }
      : {}),
    timeout_seconds: step.timeout_seconds ?? workflow.config.step_timeout_seconds ?? DEFAULT_AGENT_TIMEOUT_SECONDS,
  };
}

/**
 * A step's MCP selections with each server's name, URL and own tool limit as they are now (never its credentials);
 * a stdio server by its name.
 */
function mcpSelections(
  selections: readonly NonNullable<WorkflowStepDoc['mcp_tools']>[number][],
  sources: SnapshotSources,
): McpServerSelection[] {
  return selections.map((sel): McpServerSelection => {
    if (sel.stdio !== undefined) {
      // The operator's declaration (command, allowed tools) is the worker's to apply when it launches the server.
      const { stdio, ...filters } = sel;
      return { ...filters, server_id: stdioServerKey(stdio), server_name: stdio, url: '', allowed_tools: null, stdio };
    }
    const server = sources.mcpServers?.get(sel.server_id);
    if (!server) throw new Error(`MCP server ${sel.server_id} not resolved`);
    return { ...sel, server_name: server.name, url: server.url, allowed_tools: server.allowed_tools };
  });
}
