/**
 * Run budgets under fail-fast concurrency (issue 44, item 3; docs/runs.md "Under concurrency"): an agent step mapped
 * over n items at concurrency n, and n parallel agent branches, none going on after an error, at n = 2, 4 and 10
 * with 0 to 3 calls left in the budget. Each run makes exactly min(budget, n) calls — the scripted model counts the
 * calls that reach it — and ends `failed` with `budget_exceeded` when the budget is smaller than n, else `completed`.
 *
 * The refused item or branch used to fail at once and cancel the others: a projection write (a local activity)
 * cancelled after core had its result made every workflow task fail with "[TMPRL1100] Nondeterminism error:
 * Invalid transition in state machine", and the run hung with no call made. Budget 0 is reached the way a run reaches
 * it (the API takes at least 1): a first step spends the run's one call before the parallel part starts.
 *
 * All 24 runs go at once on one worker, each against its own scripted model.
 */
import { insertAgentTemplate } from '../../helpers/agent-runs';
import { startLlmServer, type LlmServer, type ModelScript } from '../../helpers/llm-server';
import {
  startTestApi,
  startTestWorker,
  testConfig,
  uniqueId,
  type TestApi,
  type TestWorker,
} from '../../helpers/stack';
import { createTestUser, type TestUser } from '../../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus, type StatusBody } from '../../helpers/workflows';
import type { JsonObject } from '../../../domain/json';

const WIDTHS = [2, 4, 10] as const;
const BUDGETS = [0, 1, 2, 3] as const;
const SHAPES = ['map', 'branches'] as const;

interface Case {
  shape: (typeof SHAPES)[number];
  n: number;
  /** Calls the budget leaves for the parallel part. */
  left: number;
}
interface Outcome {
  status: StatusBody;
  /** Calls that reached the model in the parallel part. */
  parallelCalls: number;
}

const CASES: Case[] = SHAPES.flatMap((shape) => WIDTHS.flatMap((n) => BUDGETS.map((left) => ({ shape, n, left }))));
const label = (c: Case) => `${c.shape}, n=${c.n}, ${c.left} calls left`;

describe('run budgets under fail-fast concurrency', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  const outcomes = new Map<string, Outcome | Error>();

  async function runCase(c: Case): Promise<Outcome> {
    const script: ModelScript = llm.script(uniqueId('gpt-test-'), (req) =>
      JSON.stringify(req.body.messages).includes('spend the first call')
        ? { text: 'first', usage: { input: 1, output: 1 } }
        : { text: 'done', usage: { input: 10, output: 5 } },
    );
    const template = await insertAgentTemplate(api, user, { model: `openai:${script.model}`, max_turns: 3 });
    const agent = (id: string, input: string, extra: JsonObject = {}): JsonObject => ({
      id,
      template_id: template._id,
      input,
      retry: { max_attempts: 1 },
      ...extra,
    });
    // Budget 0: the run's only call goes to a first step; the parallel part starts with none left.
    const lead = c.left === 0 ? [agent('first', 'spend the first call')] : [];
    const after = c.left === 0 ? ['first'] : [];
    const parallel =
      c.shape === 'map'
        ? [
            agent('each', '{{map.item}}', {
              depends_on: after,
              map: { over: '{{input.items}}', concurrency: c.n },
            }),
          ]
        : Array.from({ length: c.n }, (_, i) => agent(`b${i}`, `branch ${i}`, { depends_on: after }));
    const workflowId = await createWorkflow(api, user, {
      name: uniqueId('budget matrix '),
      steps: [...lead, ...parallel],
      config: { budget: { max_model_calls: Math.max(c.left, 1) } },
    });
    const items = Array.from({ length: c.n }, (_, i) => `item ${i}`);
    const runId = await startRun(api, user, workflowId, { items });
    const status = await waitForStatus(api, user, runId, isTerminal, 120_000);
    return { status, parallelCalls: script.requests.length - lead.length };
  }

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(testConfig({ OPENAI_API_KEY: 'sk-test-budget-0123456789', OPENAI_BASE_URL: llm.baseUrl }));
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    const settled = await Promise.allSettled(CASES.map(runCase));
    settled.forEach((s, i) => outcomes.set(label(CASES[i]!), s.status === 'fulfilled' ? s.value : (s.reason as Error)));
  }, 240_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  it.each(CASES.map((c) => [label(c), c] as const))('%s', (name, c) => {
    const outcome = outcomes.get(name);
    if (outcome instanceof Error || outcome === undefined) throw outcome ?? new Error('not run');
    const { status, parallelCalls } = outcome;
    const allowed = Math.min(c.left, c.n);
    expect(parallelCalls).toBe(allowed);
    const budget = status.budget as { model_calls_used: number };
    expect(budget.model_calls_used).toBe(allowed + (c.left === 0 ? 1 : 0));
    if (c.left < c.n) {
      expect(status.status).toBe('failed');
      expect(status.error?.reason).toBe('budget_exceeded');
    } else {
      expect(status.status).toBe('completed');
    }
  });
});
