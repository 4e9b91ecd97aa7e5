/**
 * Request schemas of the workflow routes: the source of truth for validation, types and the OpenAPI document.
 * Shape only; the checks that need the database (templates, references, action configs) are in
 * api/commands/check-workflow.ts.
 */
import { z } from 'zod';
import { queryInteger } from '../http/query-integer';
import { mcpToolSelections } from './mcp-tools';
import { egressSettings } from './egress';
import { jsonData, jsonDataObject, jsonSchemaObject } from './json';
import { ON_ERROR, TRIGGERS } from '../../domain/graph';
import { EXECUTION_ID_PATTERN } from '../../domain/exec-id';
import { httpUrl } from '../../domain/http-url';
import { MODEL_REF_MESSAGE, MODEL_REF_PATTERN } from '../../domain/agent';
import { builtInToolName } from './agents';

/** The most steps a workflow may have. */
export const MAX_STEPS = 50;
/** The longest a whole run may take (Temporal's execution timeout); 30 days. */
export const MAX_RUN_TIMEOUT_SECONDS = 30 * 24 * 3600;
/** Per-attempt timeout bounds of one step. */
export const MAX_STEP_TIMEOUT_SECONDS = 24 * 3600;
export const MAX_ATTEMPTS = 10;
/** Shape bounds of config.budget; the server's RUN_MAX_* settings are the real ceiling (api/commands/budget.ts). */
export const MAX_BUDGET_TOKENS = 1_000_000_000;
export const MAX_BUDGET_MODEL_CALLS = 100_000;

const slug = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z0-9_-]*$/, 'must be a slug: lowercase letters, digits, _ or -, starting with a letter');

const retry = z.strictObject({
  max_attempts: z.number().int().min(1).max(MAX_ATTEMPTS).meta({ description: 'Attempts including the first.' }),
});

/** Longest `when` / `loop.until` condition (domain/condition.ts refuses longer ones too). */
const condition = z.string().min(1).max(2_000);

const mapSettings = z.strictObject({
  over: z
    .string()
    .min(1)
    .max(1_100)
    .meta({
      description:
        'One reference to a list: `{{input.items}}` or `{{steps.<id>.output…}}`. Inside the step, ' +
        '`{{map.item…}}` is the current item and `{{map.index}}` its 0-based index.',
    }),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: 'Items running at once (default 5, at most MAP_MAX_CONCURRENCY).' }),
  on_item_error: z
    .enum(ON_ERROR)
    .optional()
    .meta({
      description:
        '`fail` (default): the first failed item fails the step; `continue`: its result is `{error}` and ' +
        'the other items go on.',
    }),
});

const loopSettings = z.strictObject({
  until: condition.meta({
    description: "Checked after each iteration; `steps.<this id>.output` is that iteration's output.",
  }),
  max_iterations: z.number().int().min(1).max(1_000).meta({
    description: 'Required bound (at most LOOP_MAX_ITERATIONS); reaching it fails the step with `loop_limit`.',
  }),
});

/** Fields only agent steps take. */
export const AGENT_STEP_FIELDS = [
  'prompt',
  'tools',
  'tasks',
  'model',
  'max_turns',
  'output_schema',
  'egress',
  'mcp_tools',
  'thread',
] as const;
/** Fields of agent and action steps that a sub-workflow step (`workflow_id`) does not take. */
export const NOT_ON_WORKFLOW_STEPS = [...AGENT_STEP_FIELDS, 'config'] as const;

const stepFields = z.strictObject({
  id: slug.meta({ description: 'Unique within the workflow; outputs are referenced as `{{steps.<id>.output}}`.' }),
  template_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .meta({
      description:
        'The agent or action template; exactly one of template_id, template and workflow_id (with template, the id ' +
        'it resolved to).',
    }),
  template: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({
      description:
        'The template by name instead of id (your own template of that name, else the system template of that name), ' +
        'resolved when the workflow is written; it wins over template_id, so a fetched definition can be sent back.',
    }),
  workflow_id: z.string().min(1).max(100).optional().meta({
    description: 'Run another of your workflows as a sub-workflow (a child run of its own); `input` is its run input.',
  }),
  depends_on: z.array(slug).max(MAX_STEPS).optional().meta({
    description: 'Steps this one waits for (all of them). Absent: the step before it in the list; `[]`: none.',
  }),
  when: condition.optional().meta({
    description:
      'Condition over `input…` and finished steps (`steps.<id>.output…`, `steps.<id>.status`); false → ' +
      'the step is `skipped`. See docs/graphs.md.',
  }),
  trigger: z
    .enum(TRIGGERS)
    .optional()
    .meta({
      description:
        '`any_ran` (default): skipped when every dependency was skipped; `all_ran`: skipped when any was; ' +
        '`all_done`: runs once its dependencies finished, whatever happened to them.',
    }),
  on_error: z.enum(ON_ERROR).optional().meta({
    description: '`fail` (default) ends the run; `continue` records the failure (output `{error}`) and goes on.',
  }),
  map: mapSettings.optional().meta({ description: 'Run the step once per item of a list.' }),
  loop: loopSettings.optional().meta({ description: 'Repeat the step until a condition holds.' }),
  prompt: z.string().min(1).max(32_000).optional().meta({ description: 'Agent steps: overrides default_prompt.' }),
  tools: z.array(builtInToolName).max(32).optional().meta({ description: 'Agent steps: overrides default_tools.' }),
  tasks: z.array(z.string().min(1).max(2_000)).max(50).optional(),
  max_turns: z.number().int().min(1).max(50).optional().meta({ description: 'Agent steps: overrides max_turns.' }),
  output_schema: jsonSchemaObject
    .optional()
    .meta({ description: 'Agent steps: JSON Schema (2020-12) the final answer must satisfy; overrides the template.' }),
  model: z.string().regex(MODEL_REF_PATTERN, MODEL_REF_MESSAGE).max(200).optional(),
  egress: egressSettings.optional(),
  mcp_tools: mcpToolSelections.optional().meta({ description: 'Agent steps: overrides the template’s mcp_tools.' }),
  thread: z
    .string()
    .min(1)
    .max(1_024)
    .optional()
    .meta({
      description:
        "Agent steps: a thread of the run's owner the step takes a turn in — its input is the turn's message, its " +
        "answer (tool calls, reply) goes into the thread, and it is given the thread's memory, summary and recent " +
        'turns. A thread id (`thr_…`) or a reference such as `{{input.thread_id}}`, rendered when the step runs. ' +
        'See docs/threads.md.',
      example: '{{input.thread_id}}',
    }),
  config: jsonDataObject
    .optional()
    .meta({ description: 'Merged over the template config (action steps: per action type).' }),
  input: jsonData.optional().meta({ description: 'May reference `{{input.x}}` and `{{steps.<id>.output…}}`.' }),
  retry: retry.optional(),
  timeout_seconds: z.number().int().min(1).max(MAX_STEP_TIMEOUT_SECONDS).optional(),
});

/**
 * A step's kind, as the document states it (api/commands/check-workflow.ts and template-names.ts check it): a template
 * (by id, by name, or both as a fetched definition has them) or a sub-workflow, never both or neither, and a
 * sub-workflow step takes none of the agent and action fields; and no step has both `map` and `loop`.
 */
export const workflowStepBody = stepFields.meta({
  anyOf: [{ required: ['template_id'] }, { required: ['template'] }, { required: ['workflow_id'] }],
  not: {
    anyOf: [
      {
        required: ['workflow_id'],
        anyOf: ['template', 'template_id', ...NOT_ON_WORKFLOW_STEPS].map((field) => ({ required: [field] })),
      },
      // api/commands/check-graph.ts: map and loop are never combined on one step.
      { required: ['map', 'loop'] },
    ],
  },
});

const callbackUrl = httpUrl().meta({
  description:
    'Completion webhook: when the run ends, the run status body is POSTed here, signed with your webhook secret ' +
    '(GET /api/v1/webhooks/secret; docs/webhooks.md). Private, loopback and link-local addresses are refused, ' +
    'and so is a host of invalid punycode (`xn--…`).',
  example: 'https://example.com/hooks/stepwise',
});

const budget = z.strictObject({
  max_tokens: z
    .number()
    .int()
    .min(1)
    .max(MAX_BUDGET_TOKENS)
    .optional()
    .meta({ description: 'Input + output tokens of all model calls of a run (default and ceiling: RUN_MAX_TOKENS).' }),
  max_model_calls: z
    .number()
    .int()
    .min(1)
    .max(MAX_BUDGET_MODEL_CALLS)
    .optional()
    .meta({ description: 'Model calls of a run (default and ceiling: RUN_MAX_MODEL_CALLS).' }),
});

export const workflowConfigBody = z.strictObject({
  input_schema: jsonSchemaObject.optional().meta({ description: 'JSON Schema the run input must satisfy.' }),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_RUN_TIMEOUT_SECONDS)
    .optional()
    .meta({ description: 'Limit of a whole run; the run ends `timed_out` after it.' }),
  retry: retry.optional().meta({ description: 'Default attempt limit of each step (default 3).' }),
  step_timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_STEP_TIMEOUT_SECONDS)
    .optional()
    .meta({ description: 'Default per-attempt timeout of each step (default 60 s for actions, 300 s for agents).' }),
  budget: budget.optional().meta({
    description:
      "Lowers the server's run budget for this workflow; a run that would exceed it fails with `budget_exceeded`. " +
      "Values above the server's maximum are refused.",
  }),
  callback_url: callbackUrl.optional(),
  mcp: z
    .strictObject({
      listed: z
        .boolean()
        .optional()
        .meta({
          description:
            'Whether the workflow is a tool of the `/mcp` server (default true). Unlisted, it is left out of tools/list ' +
            'and list_workflows; start_run still starts it by id.',
        }),
    })
    .optional()
    .meta({ description: 'How the workflow appears to MCP clients of `/mcp` (docs/mcp.md).' }),
});

export const createWorkflowBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(4_000).nullable().optional(),
  steps: z.array(workflowStepBody).min(1).max(MAX_STEPS),
  config: workflowConfigBody.optional(),
});

/** PATCH: any subset of the fields; `steps` and `config` are replaced as a whole. */
export const updateWorkflowBody = createWorkflowBody
  .partial()
  .refine((body) => Object.keys(body).length > 0, 'at least one field is required')
  // The refinement above, as the document states it.
  .meta({ minProperties: 1 });

// No length limit here: an ill-formed id (too long included) is the same 404 as an unknown one (isId in the routes).
export const workflowIdParams = z.strictObject({ id: z.string().min(1) });
export const runIdParams = z.strictObject({ runId: z.string().min(1) });

/** What a rerun may change in an agent step of the source run's snapshot (api/commands/rerun.ts applies it). */
export const rerunStepOverride = z.strictObject({
  model: z
    .string()
    .regex(MODEL_REF_PATTERN, MODEL_REF_MESSAGE)
    .max(200)
    .meta({ description: "Replaces the step's model (e.g. after the provider it named was found unconfigured)." }),
});

export const rerunOverrides = z.record(slug, rerunStepOverride).meta({
  description:
    'By agent step id: what the rerun changes in that step. An overridden step runs again, with every step that ' +
    'depends on it. Recorded on the new run (`rerun_overrides` on its status).',
  example: { draft: { model: 'compat:llama3.2' } },
});

export const rerunBody = z.strictObject({
  overrides: rerunOverrides.optional(),
  from_step: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({
      description:
        'The step to run again, with every step after it (default: the first step that did not complete). Steps ' +
        'that completed before it keep their recorded outputs.',
    }),
});

export const startRunBody = z.strictObject({
  input: jsonDataObject.optional().meta({ description: 'Run input, validated against config.input_schema.' }),
  callback_url: callbackUrl
    .optional()
    .meta({ description: "Replaces the workflow's config.callback_url for this run." }),
});

export const approveBody = z.strictObject({
  step_id: z
    .string()
    .min(1)
    .max(80)
    .regex(EXECUTION_ID_PATTERN, 'must be a step id, or <step>[<index>] / <step>#<iteration> inside a map or loop')
    .meta({
      description: 'The waiting approval: its step id, or its execution id inside a map (`review[2]`) or loop.',
    }),
  approved: z.boolean(),
  comment: z.string().max(4_000).nullable().optional(),
});

export const statusQuery = z.strictObject({
  wait: queryInteger({ min: 0, max: 60 })
    .optional()
    .meta({ description: 'Long poll: wait up to this many seconds for the status to change.' }),
  until: z
    .enum(['change', 'end'])
    .optional()
    .meta({
      description:
        "What a `wait` answers at: the run's first change (`change`, the default: a step started or ended, …) or " +
        'its end (`end`: answered once the run has a terminal status, or when the wait is over).',
    }),
});

export const stepExecutionsParams = z.strictObject({ runId: z.string().min(1), stepId: slug });
