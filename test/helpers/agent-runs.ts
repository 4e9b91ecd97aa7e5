/**
 * Agent-step fixtures that go the way a user goes: an agent template in the database, a workflow created through
 * the API, the run started through the API and followed on the status endpoint; the transcript read through its
 * endpoint.
 */
import type { TemplateDoc } from '../../db/templates';
import type { EgressSettings } from '../../domain/egress';
import type { JsonObject } from '../../domain/json';
import { uniqueId, type TestApi } from './stack';
import type { TestUser } from './users';
import { createWorkflow, insertTemplate, isTerminal, startRun, waitForStatus, type StatusBody } from './workflows';

export interface AgentCase {
  /** `provider:name`. */
  model: string;
  prompt?: string;
  tasks?: string[];
  tools?: string[];
  max_turns?: number;
  output_schema?: JsonObject;
  /** Agent settings: `temperature`, `max_output_tokens`. */
  config?: JsonObject;
  /** The template's egress policy (absent: the defaults — no e-mail, any public host). */
  egress?: EgressSettings;
  /** Extra fields of the workflow step (overrides such as `max_turns`, `output_schema`). */
  step?: JsonObject;
  max_attempts?: number;
  timeout_seconds?: number;
  /** The workflow's `config` (e.g. `budget`). */
  workflow_config?: JsonObject;
}

export const DEFAULT_QUESTION = 'What is 6 times 7?';

/** An agent template with test defaults: a short prompt, two tasks, the calculator tool. */
export async function insertAgentTemplate(api: TestApi, user: TestUser, c: AgentCase): Promise<TemplateDoc> {
  return insertTemplate(api.database.db, user.id, {
    step_type: 'agent',
    name: uniqueId('Test agent '),
    default_prompt: c.prompt ?? 'You are a careful assistant.',
    default_tasks: c.tasks ?? ['Read the question', 'Compute the answer with the calculator'],
    default_tools: c.tools ?? ['calculator'],
    model: c.model,
    max_turns: c.max_turns ?? null,
    output_schema: c.output_schema ?? null,
    config: c.config ?? {},
    ...(c.egress ? { egress: c.egress } : {}),
  });
}

/** A one-step workflow (`ask`, input `{{input.question}}`) over a fresh agent template. */
export async function createAgentWorkflow(api: TestApi, user: TestUser, c: AgentCase): Promise<string> {
  const template = await insertAgentTemplate(api, user, c);
  return createWorkflow(api, user, {
    name: 'agent test',
    steps: [
      {
        id: 'ask',
        template_id: template._id,
        input: '{{input.question}}',
        ...(c.max_attempts ? { retry: { max_attempts: c.max_attempts } } : {}),
        ...(c.timeout_seconds ? { timeout_seconds: c.timeout_seconds } : {}),
        ...c.step,
      },
    ],
    ...(c.workflow_config ? { config: c.workflow_config } : {}),
  });
}

/** Creates the workflow, starts a run through the API and polls the status endpoint until the run has ended. */
export async function runAgent(
  api: TestApi,
  user: TestUser,
  c: AgentCase,
  input: JsonObject = { question: DEFAULT_QUESTION },
): Promise<{ runId: string; status: StatusBody }> {
  const workflowId = await createAgentWorkflow(api, user, c);
  const runId = await startRun(api, user, workflowId, input);
  const status = await waitForStatus(api, user, runId, isTerminal, 60_000);
  return { runId, status };
}

export interface TranscriptBody {
  system_prompt: string | null;
  tools: string[];
  turns: number | null;
  usage: { llm_calls: number; input_tokens: number; output_tokens: number };
  final_answer: string | null;
  entries: ({ seq: number; role: 'user' | 'assistant' | 'tool' } & Record<string, unknown>)[];
  [key: string]: unknown;
}

/** The step's transcript through GET …/steps/:stepId/transcript. */
export async function getTranscript(
  api: TestApi,
  user: TestUser,
  runId: string,
  stepId = 'ask',
): Promise<TranscriptBody> {
  const res = await api.http.get(`/api/v1/workflows/runs/${runId}/steps/${stepId}/transcript`).set(user.auth);
  if (res.status !== 200) throw new Error(`transcript: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { data: TranscriptBody }).data;
}
