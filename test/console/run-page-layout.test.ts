/**
 * The run and workflow pages measured in a real browser at the widths the console is used at (1400 and 1920 px):
 * a long step graph and a map's items table stay inside their panels (or scroll there), table headers and ids do not
 * wrap letter by letter, the approval box says what is being approved, status marks are drawn shapes rather than font
 * glyphs (Debian's default fonts lack some, which then render as empty boxes), a decision names "you", and the
 * workflow page's graph names templates as the run page does.
 */
import type { Page } from 'playwright-core';
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, isTerminal, startRun, waitForStatus } from '../helpers/workflows';

const WIDTHS = [1400, 1920] as const;
const ACCOUNTS = Array.from({ length: 6 }, (_, i) => `account-with-a-long-identifier-${i}`);

const node = (page: Page, stepId: string, status?: string) =>
  page.locator(`[data-testid="step-node"][data-step-id="${stepId}"]${status ? `[data-status="${status}"]` : ''}`);

/**
 * Horizontal fit of an element in `container` (its card), measured on its frame: the nearest element from it up to
 * the card that scrolls sideways, else the element itself.
 */
interface Fit {
  scrollWidth: number;
  clientWidth: number;
  overflowX: string;
  right: number;
  containerRight: number;
  containerScrollWidth: number;
  containerClientWidth: number;
  pageScrollWidth: number;
  pageClientWidth: number;
}

async function measureFit(page: Page, selector: string, container: string): Promise<Fit> {
  return page.locator(selector).evaluate((el, containerSel) => {
    const box = el.closest(containerSel);
    if (!box) throw new Error(`no ${containerSel} around the element`);
    const overflowX = (e: typeof el) => e.ownerDocument.defaultView!.getComputedStyle(e).overflowX;
    let frame = el;
    for (let e = el; e && e !== box; e = e.parentElement) {
      if (overflowX(e) === 'auto' || overflowX(e) === 'scroll') {
        frame = e;
        break;
      }
    }
    return {
      scrollWidth: frame.scrollWidth,
      clientWidth: frame.clientWidth,
      overflowX: overflowX(frame),
      right: frame.getBoundingClientRect().right,
      containerRight: box.getBoundingClientRect().right,
      containerScrollWidth: box.scrollWidth,
      containerClientWidth: box.clientWidth,
      pageScrollWidth: el.ownerDocument.documentElement.scrollWidth,
      pageClientWidth: el.ownerDocument.documentElement.clientWidth,
    };
  }, container);
}

/** `mayScroll`: the content may be wider than its frame if the frame scrolls; else it must fit the frame's width. */
function expectFits(fit: Fit, { mayScroll }: { mayScroll: boolean }) {
  const scrolls = fit.overflowX === 'auto' || fit.overflowX === 'scroll';
  expect({ ...fit, fits: (mayScroll && scrolls) || fit.scrollWidth <= fit.clientWidth }).toMatchObject({ fits: true });
  // Inside its card: nothing cut off at the card's edge, and the page itself does not scroll sideways.
  expect(fit.right).toBeLessThanOrEqual(fit.containerRight + 0.5);
  expect(fit.containerScrollWidth).toBeLessThanOrEqual(fit.containerClientWidth);
  expect(fit.pageScrollWidth).toBeLessThanOrEqual(fit.pageClientWidth);
}

/** Heights of the cells matching `selector` in lines of their own line height (padding and borders taken off). */
async function lineCounts(page: Page, selector: string): Promise<{ text: string; lines: number }[]> {
  return page.locator(selector).evaluateAll((cells) =>
    cells.map((cell) => {
      const s = cell.ownerDocument.defaultView!.getComputedStyle(cell);
      const inner =
        cell.getBoundingClientRect().height -
        parseFloat(s.paddingTop) -
        parseFloat(s.paddingBottom) -
        parseFloat(s.borderTopWidth) -
        parseFloat(s.borderBottomWidth);
      return { text: cell.textContent ?? '', lines: inner / parseFloat(s.lineHeight) };
    }),
  );
}

describe('console run and workflow pages at 1400 and 1920 px', () => {
  let s: ConsoleStack;

  beforeAll(async () => {
    s = await startConsoleStack();
  }, 120_000);
  afterAll(() => s?.stop());

  const signIn = async (path: string, width: number): Promise<Page> => {
    const page = await s.newPage();
    page.setDefaultTimeout(30_000);
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${s.baseUrl}${path}`);
    await page.getByLabel('API key').fill(s.g.user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  };

  /** A completed run of a chain of steps too long for one row, with a map step of long items; created once. */
  let wideRun: Promise<string> | undefined;
  const wide = () =>
    (wideRun ??= (async () => {
      const { g } = s;
      const chain = ['fetch-customers', 'normalise-records', 'score-accounts', 'rank-accounts', 'draft-summaries'];
      const workflowId = await createWorkflow(g.api, g.user, {
        name: uniqueId('Wide '),
        steps: [
          ...chain.map((id) => ({ id, template_id: g.tpl.transform._id, config: { expression: '1' } })),
          {
            id: 'summarise-each-account',
            template_id: g.tpl.transform._id,
            map: { over: '{{input.accounts}}' },
            config: {
              expression: '$',
              data: { account: '{{map.item}}', note: 'a long note that makes the cell wide' },
            },
          },
          { id: 'publish-report', template_id: g.tpl.transform._id, config: { expression: '"done"' } },
        ],
      });
      const runId = await startRun(g.api, g.user, workflowId, { accounts: ACCOUNTS });
      expect((await waitForStatus(g.api, g.user, runId, isTerminal)).status).toBe('completed');
      return runId;
    })());

  /** A run waiting on an approval whose message and instructions are rendered from the run input; created once. */
  let approvalRun: Promise<string> | undefined;
  const waitingApproval = () =>
    (approvalRun ??= (async () => {
      const { g } = s;
      const workflowId = await createWorkflow(g.api, g.user, {
        name: uniqueId('Release '),
        steps: [
          {
            id: 'ask',
            template_id: g.tpl.approval._id,
            config: { message: 'Ship release {{input.version}}?', instructions: 'Check the changelog first.' },
          },
          { id: 'ship', template_id: g.tpl.transform._id, config: { expression: '"shipped"' } },
        ],
      });
      const runId = await startRun(g.api, g.user, workflowId, { version: '1.2' });
      await waitForStatus(g.api, g.user, runId, (st) => st.status === 'waiting');
      return runId;
    })());

  it.each(WIDTHS)('draws a step chain too long for its card as a column inside the card (%i px)', async (width) => {
    const page = await signIn(`/console/runs/${await wide()}`, width);
    await node(page, 'publish-report', 'completed').waitFor();
    await s.screenshot(page, `run-page-graph-${width}`);
    expectFits(await measureFit(page, '.graph-scroll', '.card'), { mayScroll: false });
    await page.context().close();
  });

  it.each(WIDTHS)('keeps the map items table in the step panel, headers and ids on one line (%i px)', async (width) => {
    const page = await signIn(`/console/runs/${await wide()}?step=summarise-each-account`, width);
    const panel = page.getByTestId('step-panel');
    await panel
      .getByTestId('execution-row')
      .nth(ACCOUNTS.length - 1)
      .waitFor();
    await s.screenshot(page, `run-page-items-${width}`);

    const headers = await lineCounts(page, '[data-testid="step-panel"] th');
    expect(headers.map((h) => h.text)).toEqual(['Item', 'Status', 'Attempts', 'Output or error']);
    for (const h of headers)
      expect({ header: h.text, oneLine: h.lines < 1.5 }).toEqual({ header: h.text, oneLine: true });
    const ids = await lineCounts(page, '[data-testid="execution-row"] td:first-child');
    expect(ids).toHaveLength(ACCOUNTS.length);
    for (const id of ids) expect({ id: id.text, oneLine: id.lines < 1.5 }).toEqual({ id: id.text, oneLine: true });
    // Wider than the panel, the table scrolls inside it; the panel and the page do not grow sideways.
    expectFits(await measureFit(page, '[data-testid="step-panel"] table', '.card'), { mayScroll: true });
    await page.context().close();
  });

  it.each(WIDTHS)('shows what a waiting approval asks in the approval box (%i px)', async (width) => {
    const page = await signIn(`/console/runs/${await waitingApproval()}`, width);
    await node(page, 'ask', 'waiting').waitFor();
    const box = page.getByRole('region', { name: 'Waiting for a decision' });
    await box.getByText('Ship release 1.2?').waitFor();
    await box.getByText('Check the changelog first.').waitFor();
    await s.screenshot(page, `run-page-approval-${width}`);
    await page.context().close();
  });

  it.each(WIDTHS)('draws status marks as shapes, not characters a font may lack (%i px)', async (width) => {
    const page = await signIn(`/console/runs/${await waitingApproval()}`, width);
    await node(page, 'ask', 'waiting').waitFor();
    // The node says "Waiting" in words; its mark is drawn beside them.
    expect(await node(page, 'ask').locator('.node-status').textContent()).toBe('Waiting');
    expect(await node(page, 'ask').locator('[data-testid="status-mark"] > *').count()).toBeGreaterThan(0);
    const marks = await page
      .locator('[data-testid="status"] .badge-mark')
      .evaluateAll((els) =>
        els.map((el) => ({ tag: el.tagName.toLowerCase(), text: el.textContent, drawn: el.children.length > 0 })),
      );
    expect(marks.length).toBeGreaterThanOrEqual(2); // the run's badge and the selected step's
    for (const m of marks) expect(m).toEqual({ tag: 'svg', text: '', drawn: true });
    await page.context().close();
  });

  it('names the decider of an approval as a person reads it: "you"', async () => {
    const { g } = s;
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('Decided '),
      steps: [{ id: 'ok', template_id: g.tpl.approval._id, config: { message: 'Fine?' } }],
    });
    const runId = await startRun(g.api, g.user, workflowId);
    await waitForStatus(g.api, g.user, runId, (st) => st.status === 'waiting');
    await g.api.http
      .post(`/api/v1/workflows/runs/${runId}/approve`)
      .set(g.user.auth)
      .send({ step_id: 'ok', approved: true, comment: 'Changelog checked' })
      .expect(200);
    const done = await waitForStatus(g.api, g.user, runId, isTerminal);
    expect(done.outputs.ok).toMatchObject({ decided_by: g.user.id });

    const page = await signIn(`/console/runs/${runId}?step=ok`, WIDTHS[0]);
    const decision = page.getByTestId('step-panel').getByTestId('decision-summary');
    await decision.getByText(/^Approved by you/).waitFor();
    expect(await decision.textContent()).toContain('Changelog checked');
    expect(await decision.textContent()).not.toContain(g.user.id);
    await page.context().close();
  });

  it.each(WIDTHS)('names templates on the workflow page graph, as the run page does (%i px)', async (width) => {
    const { g } = s;
    const workflowId = await createWorkflow(g.api, g.user, {
      name: uniqueId('Named '),
      steps: [
        { id: 'shape', template_id: g.tpl.transform._id, config: { expression: '1' } },
        { id: 'gate', template_id: g.tpl.approval._id, config: { message: 'Go?' } },
      ],
    });
    const page = await signIn(`/console/workflows/${workflowId}`, width);
    await node(page, 'gate').waitFor();
    await node(page, 'shape').locator('.node-sub').getByText(g.tpl.transform.name).waitFor();
    await node(page, 'gate').locator('.node-sub').getByText(g.tpl.approval.name).waitFor();
    expect(await page.getByTestId('step-graph').textContent()).not.toContain(g.tpl.transform._id);
    expectFits(await measureFit(page, '.graph-scroll', '.card'), { mayScroll: false });
    await page.context().close();
  });
});
