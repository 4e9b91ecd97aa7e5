/**
 * The console's Threads page and chat view in Chromium against the real stack, a scripted model and an MCP server with
 * a destructive tool, at the widths the console is used at (1400 and 1920 px): a new thread from a template, a
 * message whose answer shows while the model still writes it, then the reply in the conversation; a tool call that
 * waits for approval, approved from its buttons in the conversation, folded (unfolded: arguments and result) and then
 * listed with the decision; a turn cancelled from its button. Nothing is wider than the window.
 */
import type { Page } from 'playwright-core';
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import { uniqueId } from '../helpers/stack';
import { insertTemplate } from '../helpers/workflows';
import { startFailureServer, type FailureServer } from '../mcp/mcp-test-servers';

const WIDTHS = [1400, 1920];

describe('console: threads', () => {
  let s: ConsoleStack;
  let mcp: FailureServer;
  let ops: { id: string; name: string };
  const holds: (() => void)[] = [];

  beforeAll(async () => {
    mcp = await startFailureServer();
    s = await startConsoleStack({ HTTP_ALLOWED_HOSTS: mcp.host });
    const res = await s.g.api.http
      .post('/api/v1/mcp-servers')
      .set(s.g.user.auth)
      .send({ name: uniqueId('ops'), url: mcp.url, allowed_tools: ['wipe'] });
    expect(res.status).toBe(201);
    ops = res.body.data;
  }, 120_000);
  afterAll(async () => {
    for (const release of holds) release();
    await s?.stop();
    await mcp?.close();
  });

  const hold = () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    holds.push(release);
    return { released, release };
  };
  const signIn = async (path: string, width: number): Promise<Page> => {
    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${s.baseUrl}${path}`);
    await page.getByLabel('API key').fill(s.g.user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  };
  /** The page is no wider than the window. */
  const fits = async (page: Page) => {
    const scroll = await page.evaluate<number>('document.documentElement.scrollWidth');
    const client = await page.evaluate<number>('document.documentElement.clientWidth');
    expect(scroll).toBeLessThanOrEqual(client);
  };

  it.each(WIDTHS)(
    'chats: live text, the reply, an approval in the conversation, a cancel (%i px)',
    async (width) => {
      const { g } = s;
      const greeting = hold();
      const story = hold();
      const wipe = `${ops.name}__wipe`;
      const model = g.llm.script(uniqueId('console-chat-'), [
        {
          text: 'Hello Ada! Nice to meet you.',
          stream: { chunkChars: 4, holdAfter: { chars: 12, until: greeting.released } },
        },
        { toolCalls: [{ name: wipe, args: { target: 'staging' } }] },
        { text: 'Wiped staging.' },
        {
          text: 'Once upon a time, a long story.',
          stream: { chunkChars: 4, holdAfter: { chars: 16, until: story.released } },
        },
      ]);
      const tpl = await insertTemplate(g.api.database.db, g.user.id, {
        step_type: 'agent',
        name: uniqueId('Chat buddy '),
        default_prompt: 'You are a friendly assistant.',
        model: `openai:${model.model}`,
        mcp_tools: [{ server_id: ops.id }],
      });

      const page = await signIn('/console/threads', width);
      const form = page.getByTestId('new-thread');
      await form.locator(`option[value="${tpl._id}"]`).waitFor({ state: 'attached' });
      await form.getByTestId('new-thread-template').selectOption(tpl._id);
      await form.getByTestId('new-thread-title').fill(`Trip ${width}`);
      await form.getByTestId('new-thread-button').click();
      await page.getByTestId('thread-page').waitFor();
      await page.getByRole('heading', { name: `Trip ${width}` }).waitFor();

      // Live text: the first part shows while the model server holds the rest.
      const conversation = page.getByTestId('conversation');
      await page.getByTestId('chat-input').fill('Hi, I am Ada');
      await page.getByTestId('send-button').click();
      await conversation.getByTestId('live-text').getByText('Hello Ada!').waitFor();
      expect(await conversation.textContent()).not.toContain('Nice to meet');
      await s.screenshot(page, `thread-live-text-${width}`);
      await fits(page);
      greeting.release();
      await conversation
        .locator('[data-testid="message"][data-role="assistant"]')
        .getByText('Hello Ada! Nice to meet you.')
        .waitFor();
      await page.locator('[data-testid="thread-page"][data-busy="false"]').waitFor();

      // A tool call waiting for approval: its buttons in the conversation let the call through once.
      await page.getByTestId('chat-input').fill('Please wipe staging');
      await page.getByTestId('chat-input').press('Enter');
      const approval = conversation.getByTestId('thread-approval');
      await approval.getByText('"target":"staging"').waitFor();
      await s.screenshot(page, `thread-approval-${width}`);
      await fits(page);
      const before = mcp.callsOf('wipe').length;
      await approval.getByRole('button', { name: 'Approve' }).click();
      await conversation
        .locator('[data-testid="message"][data-role="assistant"]')
        .getByText('Wiped staging.')
        .waitFor();
      expect(mcp.callsOf('wipe').length - before).toBe(1);
      // Folded; unfolded it shows the arguments and the result.
      const call = conversation.locator(`details[data-testid="tool-call"][data-tool="${wipe}"]`).last();
      await call.waitFor();
      expect(await call.getAttribute('open')).toBeNull();
      await call.locator('summary').click();
      await call.getByLabel(`Arguments of ${wipe}`).getByText('staging').waitFor();
      await call.getByLabel(`Result of ${wipe}`).getByText('wiped').waitFor();
      await page.locator('[data-testid="thread-page"][data-busy="false"]').waitFor();
      // The turn's approval stays in the conversation with the decision (GET …/messages), folded like a tool call.
      const asked = conversation.locator('[data-testid="message"][data-role="approval"][data-status="approved"]');
      await asked.filter({ hasText: wipe }).waitFor();
      expect(await asked.count()).toBe(1);
      await conversation.getByTestId('thread-approval').waitFor({ state: 'detached' });

      // A running turn cancelled from its button: the conversation says so and the box takes messages again.
      await page.getByTestId('chat-input').fill('Tell me a long story');
      await page.getByTestId('send-button').click();
      await conversation.getByTestId('live-text').getByText('Once upon a').waitFor();
      await page.getByTestId('cancel-turn').click();
      await conversation
        .locator('[data-testid="message"][data-role="user"]')
        .filter({ hasText: 'Tell me a long story' })
        .locator('[data-status="cancelled"]')
        .waitFor();
      await page.locator('[data-testid="thread-page"][data-busy="false"]').waitFor();
      story.release();
      await s.screenshot(page, `thread-chat-${width}`);
      await fits(page);

      // The thread is listed.
      await page.getByRole('link', { name: 'Threads', exact: true }).first().click();
      await page
        .locator('[data-testid="thread-row"]')
        .filter({ hasText: `Trip ${width}` })
        .waitFor();
      await fits(page);
    },
    150_000,
  );
});
