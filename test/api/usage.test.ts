/**
 * GET /api/v1/usage on the real stack: an agent run's calls show up by day, model, template and workflow with the
 * price table's cost (null for a model it does not price), threads come from the call documents, another user sees
 * none of it, and bad dates, ranges and groupings are 400s in the envelope; `stepwise usage` prints it as a table.
 * Responses are checked against the OpenAPI document.
 */
import { runCli } from '../../cli/run';
import { loadConfig } from '../../config';
import { countCall, earlierCount, utcDay } from '../../db/usage';
import { expectError } from '../helpers/api';
import { createAgentWorkflow } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { openApiChecker } from '../helpers/openapi';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';

interface UsageRowBody {
  day?: string;
  model?: string;
  template_id?: string | null;
  template_name?: string | null;
  workflow_id?: string | null;
  workflow_name?: string | null;
  thread_id?: string | null;
  input_tokens: number;
  output_tokens: number;
  tokens: number;
  calls: number;
  cost_usd: number | null;
}
interface UsageBody {
  from: string;
  to: string;
  group_by: string[];
  currency: string;
  rows: UsageRowBody[];
  total: Omit<UsageRowBody, 'day' | 'model'>;
}

describe('GET /api/v1/usage', () => {
  let llm: LlmServer;
  let api: TestApi;
  let worker: TestWorker;
  let owner: TestUser;
  let other: TestUser;
  let priced: string;
  let unpriced: string;
  let workflowId: string;
  const checker = openApiChecker();
  const today = utcDay(new Date());

  beforeAll(async () => {
    llm = await startLlmServer();
    const script = llm.script(uniqueId('gpt-test-'), [{ text: '42', usage: { input: 2_000, output: 500 } }]);
    const script2 = llm.script(uniqueId('gpt-test-'), [{ text: '43', usage: { input: 100, output: 10 } }]);
    priced = `openai:${script.model}`;
    unpriced = `openai:${script2.model}`;
    api = await startTestApi(
      testConfig({
        OPENAI_API_KEY: 'sk-test-usage-key-000000',
        OPENAI_BASE_URL: llm.baseUrl,
        MODEL_PRICES: JSON.stringify({ [priced]: { input: 1, output: 4 } }),
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    [owner, other] = await Promise.all([createTestUser(api.database.db), createTestUser(api.database.db)]);
    workflowId = await createAgentWorkflow(api, owner, { model: priced, tools: [] });
    const second = await createAgentWorkflow(api, owner, { model: unpriced, tools: [] });
    for (const wf of [workflowId, second]) {
      const runId = await startRun(api, owner, wf, { question: 'What is 6 times 7?' });
      const status = await waitForStatus(api, owner, runId, isTerminal);
      if (status.status !== 'completed') throw new Error(`run ended ${JSON.stringify(status)}`);
    }
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  const usage = async (user: TestUser, query = '') => {
    const res = await api.http.get(`/api/v1/usage${query}`).set(user.auth);
    checker.check(res);
    expect(res.status).toBe(200);
    return (res.body as { data: UsageBody }).data;
  };

  it('shows the day by default, with a cost that is null when a model has no price', async () => {
    const u = await usage(owner);
    expect(u).toMatchObject({ to: today, group_by: ['day'], currency: 'USD' });
    expect(u.rows).toEqual([
      {
        day: today,
        input_tokens: 2_100,
        output_tokens: 510,
        tokens: 2_610,
        calls: 2,
        cost_usd: null,
      },
    ]);
  });

  it('groups by model, template and workflow, with names and the price table’s cost', async () => {
    const u = await usage(owner, `?from=${today}&to=${today}&group_by=model,workflow&group_by=template`);
    expect(u.group_by).toEqual(['model', 'workflow', 'template']);
    expect(u.rows).toHaveLength(2);
    expect(u.rows[0]).toMatchObject({
      model: priced,
      workflow_id: workflowId,
      workflow_name: 'agent test',
      input_tokens: 2_000,
      output_tokens: 500,
      calls: 1,
      // 2 000 input tokens at $1 and 500 output tokens at $4 per million.
      cost_usd: 0.004,
    });
    expect(u.rows[0]!.template_name).toMatch(/^Test agent /);
    expect(u.rows[1]).toMatchObject({ model: unpriced, calls: 1, cost_usd: null });
    expect(u.total).toMatchObject({ tokens: 2_610, calls: 2, cost_usd: null });
  });

  it('prints the usage as a table with `stepwise usage`', async () => {
    const config = loadConfig({ STEPWISE_URL: await api.listen(), STEPWISE_API_KEY: owner.key });
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['usage', '--group-by', 'model', '--from', today], config, {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    expect({ code, err }).toEqual({ code: 0, err: [] });
    expect(out[0]).toBe(`usage ${today} … ${today} (USD)`);
    expect(out[1]).toMatch(/^MODEL\s+INPUT\s+OUTPUT\s+CALLS\s+COST$/);
    expect(out.find((l) => l.startsWith(priced))).toMatch(/\s2000\s+500\s+1\s+\$0\.0040$/);
    expect(out.find((l) => l.startsWith(unpriced))).toMatch(/\s100\s+10\s+1\s+-$/);
    expect(out.at(-1)).toMatch(/^TOTAL\s/);
  });

  it('groups by thread from the call documents', async () => {
    // A call made in a thread (threads are another part of the product; the count takes the run's thread_id).
    const call = {
      ownerId: owner.id,
      callKey: `run_t:${uniqueId('s')}:2`,
      at: new Date(),
      model: priced,
      origin: { run_id: 'run_t', template_id: null, workflow_id: null, thread_id: 'thr_1' },
      input_tokens: 1_000_000,
      output_tokens: 0,
    };
    await countCall(api.database.db, call, earlierCount(api.database.db, { ...call, attempt: 1 }));
    // Without days, a thread grouping covers the kept week.
    const u = await usage(owner, '?group_by=thread');
    expect(u.rows).toEqual([
      expect.objectContaining({ thread_id: 'thr_1', tokens: 1_000_000, calls: 1, cost_usd: 1 }),
      expect.objectContaining({ thread_id: null, tokens: 2_610, calls: 2, cost_usd: null }),
    ]);
  });

  it('shows another user none of it', async () => {
    const u = await usage(other, '?group_by=day,model');
    expect(u.rows).toEqual([]);
    expect(u.total).toEqual({ input_tokens: 0, output_tokens: 0, tokens: 0, calls: 0, cost_usd: 0 });
  });

  it.each([
    ['?from=2026-13-01', 'from'],
    ['?from=2026-02-30', 'from: must be a valid date'],
    ['?to=yesterday', 'to'],
    ['?group_by=month', 'group_by'],
    ['?from=2026-12-02&to=2026-12-01', 'after'],
    ['?from=2024-01-01&to=2026-01-01', '400 days'],
    ['?from=2026-01-01&group_by=thread', 'thread'],
    ['?limit=3', 'limit'],
  ])('refuses %s with a 400 in the envelope', async (query, fragment) => {
    const res = await api.http.get(`/api/v1/usage${query}`).set(owner.auth);
    checker.check(res);
    expectError(res, 400, fragment);
  });
});
