/**
 * An agent's destructive MCP tool call in the console, in a real browser against the real stack and a real MCP server
 * (written with the SDK): the Approvals page and the run page's waiting box say what the agent asks — the tool, its
 * server and the arguments —, approving from the run page lets the call through once, and the transcript shows the
 * call and its result.
 */
import type { Page } from 'playwright-core';
import { startFailureServer, type FailureServer } from '../mcp/mcp-test-servers';
import { createAgentWorkflow } from '../helpers/agent-runs';
import { startConsoleStack, type ConsoleStack } from '../helpers/browser';
import { uniqueId } from '../helpers/stack';
import { isTerminal, startRun, waitForStatus } from '../helpers/workflows';

describe('console: a destructive MCP call waiting for a decision', () => {
  let s: ConsoleStack;
  let mcp: FailureServer;

  beforeAll(async () => {
    mcp = await startFailureServer();
    s = await startConsoleStack({ HTTP_ALLOWED_HOSTS: mcp.host });
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
    await mcp?.close();
  });

  const signIn = async (path: string): Promise<Page> => {
    const page = await s.newPage();
    page.setDefaultTimeout(45_000);
    await page.goto(`${s.baseUrl}${path}`);
    await page.getByLabel('API key').fill(s.g.user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  };

  it('shows what the agent asks, approves it from the run page, and the transcript shows the call', async () => {
    const { g } = s;
    const res = await g.api.http
      .post('/api/v1/mcp-servers')
      .set(g.user.auth)
      .send({ name: uniqueId('ops'), url: mcp.url, allowed_tools: ['wipe'] });
    const server = (res.body as { data: { id: string; name: string } }).data;
    const script = g.llm.script(uniqueId('console-mcp-'), [
      { toolCalls: [{ name: `${server.name}__wipe`, args: { target: 'old-logs' } }] },
      { text: 'old logs wiped' },
    ]);
    const workflowId = await createAgentWorkflow(g.api, g.user, {
      model: `openai:${script.model}`,
      tools: [],
      step: { mcp_tools: [{ server_id: server.id }] },
    });
    const before = mcp.callsOf('wipe').length;
    const runId = await startRun(g.api, g.user, workflowId, { question: 'clean up' });
    await waitForStatus(g.api, g.user, runId, (st) => st.status === 'waiting');
    const asks = `"wipe" on server "${server.name}" with arguments {"target":"old-logs"}`;

    const page = await signIn('/console/approvals');
    await page.locator(`[data-testid="approval"][data-run-id="${runId}"]`).getByText(asks).waitFor();

    await page.goto(`${s.baseUrl}/console/runs/${runId}`);
    const box = page.getByTestId('waiting-box');
    await box.getByTestId('approval-message').getByText(asks).waitFor();
    await s.screenshot(page, 'run-page-mcp-approval');
    expect(mcp.callsOf('wipe').length).toBe(before);
    await box.getByRole('button', { name: 'Approve' }).click();

    await page.locator('[data-testid="run-page"][data-status="completed"]').waitFor();
    expect((await waitForStatus(g.api, g.user, runId, isTerminal)).status).toBe('completed');
    expect(mcp.callsOf('wipe').length - before).toBe(1);
    await page.locator('[data-testid="step-node"][data-step-id="ask"]').click();
    const transcript = page.getByTestId('transcript');
    await transcript.getByTestId('tool-call').getByText(`${server.name}__wipe`).waitFor();
    await transcript.locator('[data-role="tool"]').getByText('wiped').first().waitFor();
  });
});
