/**
 * The console shows the live text of an agent that runs as a map item or a loop iteration, not only as a plain step:
 * Chromium against the real stack, a scripted model that streams one execution's answer and holds its rest until the
 * test lets it go. The run page must show that execution's text so far under that item or iteration, then its final
 * text from the execution's transcript.
 */
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import { uniqueId } from '../helpers/stack';
import { createWorkflow, insertTemplate, startRun } from '../helpers/workflows';

describe('console in a browser: live text of map items and loop iterations', () => {
  let s: ConsoleStack;

  beforeAll(async () => {
    s = await startConsoleStack();
  }, 120_000);
  afterAll(() => s?.stop());

  it("shows an item's answer growing under that item, then its final text", async () => {
    const { g } = s;
    const first = 'Alpha has three parts. ';
    const rest = 'The first is short, the second is long, and the third is late.';
    const other = 'Beta is done.';
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Items run concurrently: each request is answered by the item it asks about, not by arrival order. Only the
    // first item writes while the test looks, so it is the one the page picks when no step is chosen.
    const script = g.llm.script(uniqueId('console-map-stream-'), (request) =>
      JSON.stringify(request.body.messages).includes('item alpha')
        ? { text: first + rest, stream: { chunkChars: 5, holdAfter: { chars: first.length, until: released } } }
        : { hold: released.then(() => ({ text: other })) },
    );
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('item writer '),
      default_prompt: 'Describe the item.',
      model: `openai:${script.model}`,
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('Live map '),
      steps: [{ id: 'each', template_id: agent._id, input: 'item {{map.item}}', map: { over: '{{input.items}}' } }],
    });
    const runId = await startRun(g.api, g.user, wf, { items: ['alpha', 'beta'] });

    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.goto(`${s.baseUrl}/console/runs/${runId}`);
    await page.getByLabel('API key').fill(g.user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();

    // No step chosen: the page selects the map step and the item writing, whose transcript ends with the text so far.
    const panel = page.locator('[data-testid="step-panel"][data-step-id="each"]');
    const item = (execId: string) => panel.locator(`[data-testid="transcript"][data-exec-id="${execId}"]`);
    const live = item('each[0]').getByTestId('live-text');
    await live.getByText(first.trim()).waitFor();
    expect(await live.getAttribute('aria-busy')).toBe('true');
    expect(await live.textContent()).toContain('writing…');
    expect(await live.textContent()).not.toContain('the third is late');
    await script.waitForRequests(2);
    await s.screenshot(page, 'console-live-text-map-item');

    // Chosen from the items table, the item stays in view when the other item writes after the release.
    await panel.getByTestId('execution-select').filter({ hasText: '[0]' }).click();
    await page.waitForURL((url) => url.searchParams.get('step') === 'each[0]');
    await live.getByText(first.trim()).waitFor();

    release();
    // The call ended: the item transcript's entry, the final text, takes the live one's place.
    await item('each[0]').getByTestId('final-answer').getByText('the third is late').waitFor();
    await item('each[0]')
      .locator('[data-role="assistant"]')
      .getByText(first + rest)
      .waitFor();
    await live.waitFor({ state: 'detached' });
    await page.locator('[data-testid="run-page"][data-status="completed"]').waitFor();

    // The other item's transcript is one click away.
    await panel.getByTestId('execution-select').filter({ hasText: '[1]' }).click();
    await item('each[1]').getByTestId('final-answer').getByText(other).waitFor();
    expect(await panel.getByTestId('transcript').count()).toBe(1);
  });

  it("shows a loop iteration's answer growing under that iteration, then its final text", async () => {
    const { g } = s;
    const first = 'Second draft, better. ';
    const rest = 'It says the same in half the words.';
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Iterations run one after another: the first answers at once, the second streams and holds its rest.
    const script = g.llm.script(uniqueId('console-loop-stream-'), [
      { text: 'First draft.' },
      { text: first + rest, stream: { chunkChars: 5, holdAfter: { chars: first.length, until: released } } },
    ]);
    const agent = await insertTemplate(g.api.database.db, g.user.id, {
      step_type: 'agent',
      name: uniqueId('redrafter '),
      default_prompt: 'Write the draft again, better.',
      model: `openai:${script.model}`,
    });
    const wf = await createWorkflow(g.api, g.user, {
      name: uniqueId('Live loop '),
      steps: [
        {
          id: 'draft',
          template_id: agent._id,
          input: 'iteration {{loop.iteration}}',
          loop: { until: 'loop.iteration >= 2', max_iterations: 3 },
        },
      ],
    });
    const runId = await startRun(g.api, g.user, wf);

    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.goto(`${s.baseUrl}/console/runs/${runId}`);
    await page.getByLabel('API key').fill(g.user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();

    // No step chosen: the page selects the loop step and the iteration that wrote last, the second, still writing.
    const panel = page.locator('[data-testid="step-panel"][data-step-id="draft"]');
    const iteration = (execId: string) => panel.locator(`[data-testid="transcript"][data-exec-id="${execId}"]`);
    const live = iteration('draft#2').getByTestId('live-text');
    await live.getByText(first.trim()).waitFor();
    expect(await live.getAttribute('aria-busy')).toBe('true');
    expect(await live.textContent()).not.toContain('half the words');

    release();
    await iteration('draft#2').getByTestId('final-answer').getByText('half the words').waitFor();
    await live.waitFor({ state: 'detached' });
    await page.locator('[data-testid="run-page"][data-status="completed"]').waitFor();

    // The first iteration's transcript, chosen from the table.
    await panel.getByTestId('execution-select').filter({ hasText: '#1' }).click();
    await iteration('draft#1').getByTestId('final-answer').getByText('First draft.').waitFor();
  });
});
