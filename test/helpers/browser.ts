/**
 * The console's browser tests: the real stack (graph-stack.ts: Temporal, the database, the scripted model, SMTP and
 * HTTP test servers, the API and a worker) with the API on a real socket serving the built console, and Debian's
 * chromium driven by playwright-core. Screenshots go to .stepwise/test-artifacts/screenshots/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureChromium } from '../../devstack/chromium';
import { ensureConsoleBuild } from '../../devstack/console-build';
import { repoRoot } from '../../devstack/paths';
import type { Config } from '../../config';
import { startGraphStack, type GraphStack } from './graph-stack';

export const SCREENSHOT_DIR = path.join(repoRoot, '.stepwise', 'test-artifacts', 'screenshots');

export interface ConsoleStack {
  g: GraphStack;
  /** `http://127.0.0.1:<port>`: the console is at `${baseUrl}/console/`. */
  baseUrl: string;
  browser: Browser;
  /** A fresh page in its own context (no storage shared with other pages), 1280×800. */
  newPage(): Promise<Page>;
  /** Saves a full-page PNG as `<name>.png` in SCREENSHOT_DIR. */
  screenshot(page: Page, name: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startConsoleStack(overrides: Partial<Record<keyof Config, string>> = {}): Promise<ConsoleStack> {
  const found = ensureChromium(() => undefined);
  if (!('path' in found)) throw new Error(found.problem);
  // Cached by its sources' digest: a no-op after `npm test`'s set-up built it.
  ensureConsoleBuild(() => undefined);
  const g = await startGraphStack({ EVENTS_POLL_MS: '100', ...overrides });
  const baseUrl = await g.api.listen();
  // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
  const browser = await chromium.launch({ executablePath: found.path, headless: true, args: ['--no-sandbox'] });
  const contexts: { close(): Promise<void> }[] = [];
  return {
    g,
    baseUrl,
    browser,
    async newPage() {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      contexts.push(context);
      return context.newPage();
    },
    async screenshot(page, name) {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
    async stop() {
      await Promise.allSettled(contexts.map((c) => c.close()));
      await browser.close().catch(() => undefined);
      await g.stop();
    },
  };
}
