/**
 * The console's experiment and comparison pages in a real browser against the real stack, at the widths the console
 * is used at (1400 and 1920 px): an experiment listed and opened, a baseline picked from its page, then the comparison
 * — the regression verdict, each scorer's means with the delta, the score distribution and cost charts, the items
 * filtered to the regressed one with its expected, baseline and candidate outputs side by side — and a second user
 * who gets a not-found; and for replayed items, each step replayed from the record or executed. Every wait is on
 * visible state.
 */
import type { Page } from 'playwright-core';
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, insertTemplate } from '../helpers/workflows';

const WIDTHS = [1400, 1920] as const;
const ENDED = ['completed', 'budget_exhausted', 'cancelled', 'failed'];

describe('console comparison page in a browser', () => {
  let s: ConsoleStack;

  beforeAll(async () => {
    s = await startConsoleStack();
  }, 120_000);
  afterAll(() => s?.stop());

  const signIn = async (user: TestUser, path: string, width: number): Promise<Page> => {
    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${s.baseUrl}${path}`);
    await page.getByLabel('API key').fill(user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  };
  const post = async <T>(path: string, body: object): Promise<T> => {
    const res = await s.g.api.http.post(`/api/v1${path}`).set(s.g.user.auth).send(body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { data: T }).data;
  };
  const waitEnd = async (id: string) => {
    for (;;) {
      const res = await s.g.api.http.get(`/api/v1/experiments/${id}`).set(s.g.user.auth);
      if (ENDED.includes((res.body as { data: { status: string } }).data.status)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** `add` sums the input (plus `extra`); `ask`, an agent beside it, spends `tokens` on a scripted model. */
  const addWorkflow = async (extra: string, tokens: { input: number; output: number }) => {
    const model = s.g.llm.script(uniqueId('cmp-'), [{ text: 'ok', usage: tokens }]);
    const agent = await insertTemplate(s.g.api.database.db, s.g.user.id, {
      step_type: 'agent',
      name: uniqueId('asker'),
      default_prompt: 'Answer.',
      default_tools: [],
      model: `openai:${model.model}`,
    });
    return createWorkflow(s.g.api, s.g.user, {
      name: uniqueId('add'),
      steps: [
        {
          id: 'add',
          template_id: s.g.tpl.transform._id,
          config: { expression: `{"sum": a + b + ${extra}}`, data: '{{input}}' },
        },
        { id: 'ask', template_id: agent._id, input: 'Say ok' },
      ],
    });
  };

  it('compares an experiment with a baseline picked on its page', async () => {
    const ds = await post<{ id: string }>('/datasets', { name: uniqueId('Sums ') });
    const added = await post<{ items: { id: string }[] }>(`/datasets/${ds.id}/items`, {
      items: [
        [1, 2],
        [3, 4],
        [5, 6],
      ].map(([a, b]) => ({ input: { a, b }, expected: { add: { sum: a! + b! } } })),
    });
    const wrongItem = added.items[0]!.id;
    const scorers = [{ kind: 'exact', path: 'add.sum' }];
    const baseName = uniqueId('Baseline ');
    const base = await post<{ id: string }>('/experiments', {
      name: baseName,
      dataset_id: ds.id,
      workflow_id: await addWorkflow('0', { input: 100, output: 10 }),
      scorers,
    });
    const candName = uniqueId('Candidate ');
    // Wrong on the first item only (a = 1): its score falls from 1 to 0, the mean from 1 to 2/3.
    const cand = await post<{ id: string }>('/experiments', {
      name: candName,
      dataset_id: ds.id,
      workflow_id: await addWorkflow('(a = 1 ? 1 : 0)', { input: 300, output: 30 }),
      scorers,
    });
    await waitEnd(base.id);
    await waitEnd(cand.id);

    for (const width of WIDTHS) {
      const page = await signIn(s.g.user, '/console/experiments', width);
      const row = page.locator(`[data-testid="experiment-row"][data-experiment-id="${cand.id}"]`);
      await row.getByRole('link', { name: candName }).click();
      await page.waitForURL(`**/console/experiments/${cand.id}`);
      await page.getByTestId('summary-table').getByText('0.667').first().waitFor();

      // The baseline, picked from the candidate's page, opens the comparison with it in the URL.
      await page.getByTestId('baseline-select').locator(`option[value="${base.id}"]`).waitFor({ state: 'attached' });
      await page.getByTestId('baseline-select').selectOption(base.id);
      await page.waitForURL(`**/console/experiments/${cand.id}/compare?baseline=${base.id}`);
      await page.getByRole('heading', { name: 'Regression' }).waitFor();
      await page.getByText('exact: mean 1 → 0.67 (-0.33, a drop of more than 0.05)').waitFor();
      await page.getByTestId('change-counts').getByText('0 improved, 1 regressed, 0 mixed, 2 unchanged').waitFor();
      const scorer = page.locator('[data-testid="scorer-row"][data-scorer="exact"]');
      expect(await scorer.getAttribute('data-delta')).toMatch(/^-0\.333/);
      expect(await scorer.locator('td').nth(1).textContent()).toBe('1.000 ± 0.000');

      // Score distribution: the baseline's three runs in the top band, the candidate's two there and one at 0.
      const bars = async (band: string) =>
        page
          .locator(`[data-testid="score-chart-group"][data-label="${band}"] rect`)
          .evaluateAll((rs) => rs.map((r) => `${r.getAttribute('data-side')}=${r.getAttribute('data-value')}`));
      await page.getByTestId('score-chart').waitFor();
      expect(await bars('0.9–1.0')).toEqual(['baseline=3', 'candidate=2']);
      expect(await bars('0.0–0.1')).toEqual(['baseline=0', 'candidate=1']);
      // Cost per item (as tokens: no price table here): the baseline's 110 and the candidate's 330 for every item.
      const costs = await page
        .getByTestId('cost-chart-group')
        .evaluateAll((gs) =>
          gs.map((g) => [...g.querySelectorAll('rect')].map((r) => r.getAttribute('data-value')).join('/')),
        );
      expect(costs).toEqual(['110/330', '110/330', '110/330']);
      await page.getByRole('row', { name: 'Tokens per run 110 (p95 110) 330 (p95 330)' }).waitFor();

      // The regressed item alone, its outputs side by side.
      await page.getByTestId('change-filter').selectOption('regressed');
      const items = page.getByTestId('compare-item');
      await page.locator(`[data-testid="compare-item"][data-change="unchanged"]`).waitFor({ state: 'detached' });
      expect(await items.count()).toBe(1);
      expect(await items.first().getAttribute('data-item-id')).toBe(wrongItem);
      await items.first().getByRole('button', { name: 'Show outputs' }).click();
      const expected = page.getByLabel(`Expected output of ${wrongItem}`);
      const baseline = page.getByLabel(`Baseline output of ${wrongItem}`);
      const candidate = page.getByLabel(`Candidate output of ${wrongItem}`);
      await candidate.waitFor();
      expect(JSON.parse((await expected.textContent())!)).toEqual({ add: { sum: 3 } });
      expect(JSON.parse((await baseline.textContent())!)).toMatchObject({ add: { sum: 3 } });
      expect(JSON.parse((await candidate.textContent())!)).toMatchObject({ add: { sum: 4 } });

      // Laid out for the width: three columns in one row, nothing wider than the window.
      const boxes = await Promise.all([expected, baseline, candidate].map((l) => l.boundingBox()));
      expect(boxes.every((b) => b !== null)).toBe(true);
      const [e, b, c] = boxes as { x: number; y: number; width: number }[];
      expect(e!.x + e!.width).toBeLessThanOrEqual(b!.x);
      expect(b!.x + b!.width).toBeLessThanOrEqual(c!.x);
      expect(Math.abs(e!.y - c!.y)).toBeLessThan(2);
      const widths = await page.locator('html').evaluate((el) => ({
        page: el.scrollWidth,
        window: el.ownerDocument.defaultView!.innerWidth,
      }));
      expect(widths.page).toBeLessThanOrEqual(widths.window);
      await s.screenshot(page, `compare-page-${width}`);
      await page.close();
    }

    // Another user: the comparison of experiments not theirs is a not-found.
    const stranger = await createTestUser(s.g.api.database.db);
    const theirs = await signIn(stranger, `/console/experiments/${cand.id}/compare?baseline=${base.id}`, 1400);
    await theirs.getByText(`experiment ${cand.id} not found`).first().waitFor();
  });

  it("shows a replayed item's steps: replayed from the record or executed", async () => {
    const total = {
      id: 'add',
      template_id: s.g.tpl.transform._id,
      config: { expression: '{"sum": a + b}', data: '{{input}}' },
    };
    const recorded = await createWorkflow(s.g.api, s.g.user, { name: uniqueId('sum'), steps: [total] });
    const started = await s.g.api.http
      .post(`/api/v1/workflows/${recorded}/run`)
      .set(s.g.user.auth)
      .send({ input: { a: 2, b: 5 } })
      .expect(202);
    const run = (started.body as { data: { run_id: string } }).data;
    for (;;) {
      const res = await s.g.api.http.get(`/api/v1/workflows/runs/${run.run_id}/status`).set(s.g.user.auth);
      if ((res.body as { data: { status: string } }).data.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const ds = await post<{ id: string }>('/datasets', { name: uniqueId('Recorded ') });
    const added = await post<{ items: { id: string }[] }>(`/datasets/${ds.id}/items/from-runs`, {
      run_ids: [run.run_id],
    });
    const labelled = await createWorkflow(s.g.api, s.g.user, {
      name: uniqueId('sum-label'),
      steps: [
        total,
        { id: 'label', template_id: s.g.tpl.transform._id, config: { expression: '"seven"', data: '{}' } },
      ],
    });
    const experiment = (workflowId: string) =>
      post<{ id: string }>('/experiments', {
        dataset_id: ds.id,
        workflow_id: workflowId,
        mode: 'replay',
        scorers: [{ kind: 'exact', path: 'add' }],
      });
    const base = await experiment(recorded);
    const cand = await experiment(labelled);
    await waitEnd(base.id);
    await waitEnd(cand.id);

    const page = await signIn(s.g.user, `/console/experiments/${cand.id}/compare?baseline=${base.id}`, 1400);
    const item = added.items[0]!.id;
    await page.locator(`[data-testid="compare-item"][data-item-id="${item}"]`).getByRole('button').click();
    const steps = page.getByLabel(`Steps of ${item} against its recorded run`);
    await steps.waitFor();
    expect(await steps.locator('li').evaluateAll((ls) => ls.map((l) => l.textContent))).toEqual([
      'add replayed',
      'label executed, output changed',
    ]);
    await page.getByTestId('replay-steps').getByText(run.run_id).waitFor();
    await page.close();
  });
});
