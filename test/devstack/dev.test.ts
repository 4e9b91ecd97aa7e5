/**
 * `npm run dev` smoke test: the real dev stack as a child process on free ports and a throwaway state folder, checked
 * through the URLs it prints, then stopped with SIGINT (as Ctrl-C would) — and not one process it started survives.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connectDatabase } from '../../db/client';
import { authenticateKey } from '../../db/users';
import { freePort, isPortOpen, waitFor } from '../../devstack/process';
import { processTree, survivors, type ProcInfo } from '../helpers/proc-tree';
import { repoRoot, runTs } from '../helpers/run-node';

jest.setTimeout(300_000);

describe('npm run dev', () => {
  let dir: string;
  let output = '';
  let seen: ProcInfo[] = [];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-dev-'));
  });
  afterAll(() => {
    // Only if an assertion failed half-way: kill whatever this test started, by pid and process group.
    for (const p of survivors(
      seen.map((s) => s.pid),
      [...new Set(seen.map((s) => s.pgid))],
    )) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts every part, prints working URLs and a demo key, and leaves nothing running after SIGINT', async () => {
    const ports = {
      API_PORT: await freePort(),
      DEV_TEMPORAL_PORT: await freePort(),
      DEV_TEMPORAL_UI_PORT: await freePort(),
      DEV_MONGODB_PORT: await freePort(),
      WORKER_HEALTH_PORT: await freePort(),
    };
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      DEV_STATE_DIR: dir,
      LOG_LEVEL: 'warn',
    };
    // Its own process group, like a shell job: SIGINT to the group is what Ctrl-C in a terminal sends.
    const dev = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'devstack', 'dev.ts')], {
      cwd: repoRoot,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    dev.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => dev.once('exit', (code) => resolve(code)));
    let exitCode: number | null | undefined;
    void exited.then((c) => (exitCode = c));

    await waitFor(
      'npm run dev to print its URLs',
      () => {
        if (exitCode !== undefined) throw new Error(`dev exited early (code ${exitCode}):\n${output}`);
        return output.includes('Press Ctrl-C to stop.');
      },
      { timeoutMs: 180_000, intervalMs: 200 },
    );
    const printed = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(output)?.[1];
    const apiUrl = printed('API');
    const uiUrl = printed('Temporal Web UI');
    const demoKey = printed('Demo API key');
    expect(apiUrl).toBe(`http://127.0.0.1:${ports.API_PORT}/api/v1`);
    expect(uiUrl).toBe(`http://127.0.0.1:${ports.DEV_TEMPORAL_UI_PORT}`);
    expect(output).toContain(`${path.join(dir, 'logs')}/{api,worker,temporal,mongodb}.log`);

    const readyz = await fetch(`http://127.0.0.1:${ports.API_PORT}/readyz`);
    expect(readyz.status).toBe(200);
    expect(await readyz.json()).toEqual({ data: { status: 'ready', mongodb: 'up', temporal: 'up' }, error: null });
    expect((await fetch(uiUrl!)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${ports.WORKER_HEALTH_PORT}/readyz`)).status).toBe(200);

    // The printed demo key is a real key of user "demo" in the database the stack started, and its file is private.
    const database = await connectDatabase({
      uri: `mongodb://127.0.0.1:${ports.DEV_MONGODB_PORT}`,
      dbName: 'stepwise',
    });
    try {
      expect((await authenticateKey(database.db, demoKey!))?.name).toBe('demo');
    } finally {
      await database.close();
    }
    expect(fs.readFileSync(path.join(dir, 'demo-key'), 'utf8').trim()).toBe(demoKey);
    expect(fs.statSync(path.join(dir, 'demo-key')).mode & 0o777).toBe(0o600);
    // Data went to the throwaway folder, not the repo's.
    expect(fs.existsSync(path.join(dir, 'data', 'temporal.db'))).toBe(true);

    // Everything it started, as seen while running: temporal, mongodb, worker, api (each in its own group) and helpers.
    seen = processTree(dev.pid!);
    const names = seen.map((p) => fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').replace(/\0/g, ' '));
    expect(names.some((n) => n.includes('server start-dev'))).toBe(true);
    expect(names.some((n) => n.includes('api/server.ts'))).toBe(true);
    expect(names.some((n) => n.includes('temporal/worker.ts'))).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(5);

    process.kill(-dev.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain('[stepwise] stopped');
    await waitFor(
      'every process of the stack to be gone',
      () =>
        survivors(
          seen.map((p) => p.pid),
          [...new Set(seen.map((p) => p.pgid))],
        ).length === 0,
      { timeoutMs: 10_000 },
    );
    for (const port of Object.values(ports)) expect(await isPortOpen(port)).toBe(false);
  });

  it('refuses to start when a port is taken or used twice, naming the settings, before starting anything', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    const shared = await freePort();
    try {
      const res = await runTs('devstack/dev.ts', [], {
        API_PORT: String(taken),
        DEV_TEMPORAL_PORT: String(shared),
        DEV_TEMPORAL_UI_PORT: String(shared),
        DEV_MONGODB_PORT: String(await freePort()),
        DEV_STATE_DIR: dir,
      });
      expect(res.code).toBe(1);
      expect(res.stdout).toContain(
        `port ${taken} for the API is already in use; free it or choose another port with API_PORT=<port>`,
      );
      expect(res.stdout).toContain(`DEV_TEMPORAL_UI_PORT and DEV_TEMPORAL_PORT both use port ${shared}`);
      expect(res.stdout).not.toContain('temporal: server up');
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
