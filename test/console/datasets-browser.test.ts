/**
 * The console's Datasets pages in a real browser against the real stack: the list, a dataset's items at the latest
 * version, an older version picked from the selector showing its items exactly as they were, the link from an item
 * to the run it was recorded from, and a second user who sees none of it. Every wait is on visible state.
 */
import type { Page } from 'playwright-core';
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import { uniqueId } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('console datasets in a browser', () => {
  let s: ConsoleStack;

  beforeAll(async () => {
    s = await startConsoleStack();
  }, 120_000);
  afterAll(() => s?.stop());

  const signIn = async (user: TestUser, path = '/console/datasets'): Promise<Page> => {
    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.goto(`${s.baseUrl}${path}`);
    await page.getByLabel('API key').fill(user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  };
  const api = <T>(method: 'post' | 'patch', path: string, body: object, status: number): Promise<T> =>
    s.g.api.http[method](`/api/v1${path}`)
      .set(s.g.user.auth)
      .send(body)
      .then((res) => {
        if (res.status !== status) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
        return (res.body as { data: T }).data;
      });

  it('lists datasets and shows the items of the latest and of an older version', async () => {
    const { g } = s;
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('Doubler '),
      steps: [{ id: 'double', template_id: g.tpl.transform._id, config: { expression: '$ * 2', data: '{{input.n}}' } }],
    });
    const run = await startRun(g.api, g.user, wf, { n: 21 });
    expect((await waitForStatus(g.api, g.user, run, isTerminal)).status).toBe('completed');

    const name = uniqueId('Golden set ');
    const ds = await api<{ id: string }>('post', '/datasets', { name, workflow_id: wf }, 201);
    const v1 = await api<{ items: { id: string }[] }>(
      'post',
      `/datasets/${ds.id}/items`,
      {
        items: [
          { input: { n: 1 }, expected: 'two' },
          { input: { n: 2 }, expected: 'four' },
        ],
      },
      201,
    );
    const first = v1.items[0]!.id;
    await api('patch', `/datasets/${ds.id}/items/${first}`, { expected: 'TWO, corrected' }, 200);
    await api('post', `/datasets/${ds.id}/items/from-runs`, { run_ids: [run] }, 201);

    const page = await signIn(g.user);
    const row = page.locator(`[data-testid="dataset-row"][data-dataset-id="${ds.id}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('3');
    expect(await row.locator('td').nth(2).textContent()).toBe('3');
    await row.getByRole('link', { name }).click();
    await page.waitForURL(`**/console/datasets/${ds.id}`);

    // The latest version: the corrected item, the second, and the one recorded from the run (linked to it).
    await page.locator('[data-testid="dataset-page"][data-version="3"]').waitFor();
    const items = page.getByTestId('item-row');
    await items.nth(2).waitFor();
    expect(await items.count()).toBe(3);
    await page.getByLabel(`Expected of ${first}`).getByText('TWO, corrected').waitFor();
    await page.getByRole('link', { name: run }).waitFor();
    await s.screenshot(page, 'dataset-page');

    // Version 1, picked from the selector: the item as it was before the correction, and no run item yet.
    await page.getByTestId('version-select').selectOption('1');
    await page.waitForURL(`**/console/datasets/${ds.id}?version=1`);
    await page.locator('[data-testid="dataset-page"][data-version="1"]').waitFor();
    await page.getByRole('heading', { name: 'Items in version 1' }).waitFor();
    await page.getByLabel(`Expected of ${first}`).getByText('two', { exact: true }).waitFor();
    expect(await page.getByTestId('item-row').count()).toBe(2);
    expect(await page.getByText('(changed in v2)').count()).toBe(1);

    // The item's run link opens the run it was recorded from.
    await page.getByTestId('version-select').selectOption('3');
    await page.getByRole('link', { name: run }).click();
    await page.waitForURL(`**/console/runs/${run}`);

    // Another user sees no dataset of the first, and its page is a not-found.
    const stranger = await createTestUser(g.api.database.db);
    const theirs = await signIn(stranger);
    await theirs.getByText('No datasets yet').waitFor();
    await theirs.goto(`${s.baseUrl}/console/datasets/${ds.id}`);
    await theirs.getByText(`dataset ${ds.id} not found`).waitFor();
  });
});
