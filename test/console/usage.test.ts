/**
 * The console's Usage page in a real browser against the real stack: after two agent runs on two models (one priced
 * in MODEL_PRICES, one not), the daily chart has today's bar with every token, the breakdown by model shows each
 * model's tokens and cost (a dash for the unpriced one), the breakdown by workflow names the workflow, and another
 * user's page shows none of it. Every wait is on visible state.
 */
import type { Page } from 'playwright-core';
import { insertAgentTemplate } from '../helpers/agent-runs';
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const PRICED = 'gpt-usage-priced';
const UNPRICED = 'gpt-usage-unpriced';

describe('console usage page', () => {
  let s: ConsoleStack;
  let workflowName: string;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    s = await startConsoleStack({ MODEL_PRICES: JSON.stringify({ [`openai:${PRICED}`]: { input: 2, output: 10 } }) });
    const { g } = s;
    g.llm.script(PRICED, [{ text: '42', usage: { input: 3_000, output: 400 } }]);
    g.llm.script(UNPRICED, [{ text: '43', usage: { input: 500, output: 50 } }]);
    workflowName = uniqueId('Usage digest ');
    for (const model of [PRICED, UNPRICED]) {
      const agent = await insertAgentTemplate(g.api, g.user, { model: `openai:${model}`, tools: [] });
      const workflowId = await createWorkflow(g.api, g.user, {
        name: model === PRICED ? workflowName : uniqueId('Other '),
        steps: [{ id: 'ask', template_id: agent._id, input: '{{input.question}}' }],
      });
      const runId = await startRun(g.api, g.user, workflowId, { question: 'What is 6 times 7?' });
      const end = await waitForStatus(g.api, g.user, runId, isTerminal);
      if (end.status !== 'completed') throw new Error(`run ended ${JSON.stringify(end)}`);
    }
  }, 120_000);
  afterAll(() => s?.stop());

  const signIn = async (user: TestUser, path: string): Promise<Page> => {
    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.goto(`${s.baseUrl}${path}`);
    await page.getByLabel('API key').fill(user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  };

  it('charts the tokens per day and breaks them down by model and by workflow, with costs', async () => {
    const page = await signIn(s.g.user, '/console/usage');
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    // Today's bar holds every token of both runs; the totals say the cost is unknown (one model has no price).
    const bar = page.locator(`[data-testid="usage-day"][data-day="${today}"]`);
    await bar.waitFor({ state: 'attached' });
    expect(await bar.getAttribute('data-tokens')).toBe('3950');
    expect(await bar.locator('rect').count()).toBe(2);
    const totals = page.getByTestId('usage-totals');
    await expect(totals.textContent()).resolves.toMatch(/Tokens3,950.*Model calls2.*Cost—/);
    await expect(page.getByRole('img', { name: /Tokens per day from/ }).count()).resolves.toBe(1);

    // By model: 3 000 input tokens at $2 and 400 output tokens at $10 per million = $0.0100.
    const priced = page.locator(`[data-testid="usage-row"][data-label="openai:${PRICED}"]`);
    await priced.waitFor();
    await expect(priced.getByTestId('usage-cost').textContent()).resolves.toBe('$0.0100');
    const unpriced = page.locator(`[data-testid="usage-row"][data-label="openai:${UNPRICED}"]`);
    await expect(unpriced.getByTestId('usage-cost').textContent()).resolves.toBe('—');
    await s.screenshot(page, 'usage-by-model');

    // By workflow, from the form: the URL keeps the choice.
    await page.getByLabel('Break down by').selectOption('workflow');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/by=workflow/);
    const row = page.locator(`[data-testid="usage-row"][data-label="${workflowName}"]`);
    await row.waitFor();
    await expect(row.getByTestId('usage-cost').textContent()).resolves.toBe('$0.0100');
    await expect(page.getByRole('table', { name: 'Usage by workflow' }).count()).resolves.toBe(1);
  });

  it("shows another user none of the first user's usage", async () => {
    const other = await createTestUser(s.g.api.database.db);
    const page = await signIn(other, '/console/usage');
    await page.getByText('No model calls in this range.').waitFor();
    const bar = page.locator(`[data-testid="usage-day"][data-day="${today}"]`);
    expect(await bar.getAttribute('data-tokens')).toBe('0');
  });
});
