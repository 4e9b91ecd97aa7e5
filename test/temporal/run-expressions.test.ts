/**
 * R10 end to end: hostile `transform` expressions on a real worker (in this process, so the test sees its event
 * loop). A memory bomb or a size bomb fails its run with `expression_error` naming the limit, and the next run on the
 * same worker completes; a catastrophic regex costs about what a harmless one of the same size does.
 */
import { getTranscript, runAgent } from '../helpers/agent-runs';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { startTestApi, startTestWorker, testConfig, uniqueId, type TestApi, type TestWorker } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates, createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';
import type { TemplateDoc } from '../../db/templates';
import type { ActionType } from '../../temporal/actions/types';

describe('R10: hostile expressions in transform steps', () => {
  let api: TestApi;
  let worker: TestWorker;
  let user: TestUser;
  let tpl: Record<ActionType, TemplateDoc>;
  let llm: LlmServer;

  beforeAll(async () => {
    llm = await startLlmServer();
    api = await startTestApi(
      testConfig({
        EXPRESSION_MEMORY_MB: '64',
        EXPRESSION_WORKERS: '2',
        OPENAI_API_KEY: 'sk-test-expressions-key-000',
        OPENAI_BASE_URL: llm.baseUrl,
      }),
    );
    worker = await startTestWorker(api.config, api.database);
    user = await createTestUser(api.database.db);
    tpl = await actionTemplates(api.database.db, user.id);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await llm?.close();
  });

  async function runTransform(name: string, expression: string) {
    const wf = await createWorkflow(api, user, {
      name,
      steps: [{ id: 'calc', template_id: tpl.transform._id, config: { expression } }],
    });
    return waitForStatus(api, user, await startRun(api, user, wf), isTerminal, 60_000);
  }

  it.each([
    ['a memory bomb', '$count([1..100000].{"a": [1..1000]})', 'more memory than the limit (64 MB)'],
    ['a $pad bomb', '$pad("", 500000000)', 'above the size limit'],
    ['a doubling string loop', '$reduce([1..40], function($a, $i) { $a & $a }, "ab")', 'Invalid string length'],
  ])('%s fails its run clearly, and the next run on the same worker completes', async (name, expression, limit) => {
    const bomb = await runTransform(name, expression);
    expect(bomb.status).toBe('failed');
    expect(bomb.error).toMatchObject({ step_id: 'calc', reason: 'non_retryable', code: 'expression_error' });
    expect(bomb.error?.message).toContain(limit);
    expect(bomb.steps[0]?.attempts).toBe(1);

    const next = await runTransform(`after ${name}`, '{"n": 1 + 1}');
    expect(next.status).toBe('completed');
    expect(next.outputs.calc).toEqual({ n: 2 });
  });

  it('a catastrophic regex costs about what a same-size harmless one does, and the worker keeps ticking', async () => {
    const n = 50_000; // backtracking would need ~2^n steps; RE2 needs ~n
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    try {
      const [evil, harmless] = await Promise.all([
        runTransform('evil regex', `$match($pad("", ${n}, "a") & "!", /(a+)+$/)`),
        runTransform('harmless regex', `$match($pad("", ${n}, "b") & "!", /(a+)+$/)`),
      ]);
      expect([evil.status, harmless.status]).toEqual(['completed', 'completed']);
      const took = (s: typeof evil) => Date.parse(s.completed_at!) - Date.parse(s.started_at!);
      expect(took(evil) / took(harmless)).toBeLessThan(20);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
  });

  it('a prompt-injected agent calling json_transform with a memory bomb hears an error; the step still completes', async () => {
    const script = llm.script(uniqueId('gpt-test-'), [
      {
        toolCalls: [
          { name: 'json_transform', args: { expression: '$count([1..100000].{"a": [1..1000]})', data: null } },
        ],
      },
      { text: 'done' },
    ]);
    const { runId, status } = await runAgent(api, user, { model: `openai:${script.model}`, tools: ['json_transform'] });
    expect(status.status).toBe('completed');
    const t = await getTranscript(api, user, runId);
    const tool = t.entries.find((e) => e.role === 'tool');
    expect(JSON.stringify(tool)).toContain('more memory than the limit (64 MB)');
  });
});
