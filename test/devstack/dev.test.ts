/**
 * `npm run dev` smoke tests: the real dev stack as a child process on free ports and a throwaway state folder, checked
 * through the URLs it prints, then stopped with SIGINT (as Ctrl-C would) — and not one process it started survives.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { connectDatabase } from '../../db/client';
import { authenticateKey, findUserByName } from '../../db/users';
import { freePort, isPortOpen, waitFor } from '../../devstack/process';
import { EncryptionCodec } from '../../shared/codec/encryption-codec';
import { parseCodecKeys } from '../../domain/codec-keys';
import { payloadFromJson, payloadToJson, type JsonPayload } from '../../shared/codec/payload-json';
import { startLlmServer } from '../helpers/llm-server';
import {
  killLeftovers,
  printed,
  startDev as startDevStack,
  stopAndExpectNothingLeft,
  waitUntilRunning,
  type DevRun,
} from '../helpers/dev-stack';
import type { ProcInfo } from '../helpers/proc-tree';
import { runTs } from '../helpers/run-node';
import { uniqueId } from '../helpers/stack';

jest.setTimeout(300_000);

const runs: DevRun[] = [];
const startDev = (env: Record<string, string>) => startDevStack(env, runs);

function commandLines(procs: ProcInfo[]): string[] {
  return procs.map((p) => {
    try {
      return fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      return '';
    }
  });
}

describe('npm run dev', () => {
  let dir: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-dev-'));
  });
  afterAll(() => {
    killLeftovers(runs);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts every part, prints working URLs and a demo key, and leaves nothing running after SIGINT', async () => {
    // A local OpenAI-compatible server on one of the probed URLs (the first has nothing listening): with no provider
    // configured, the stack runs agents on it.
    const llm = await startLlmServer();
    const model = llm.script('llama3.2', [{ text: 'A summary from the local model' }]);
    const ports = {
      API_PORT: await freePort(),
      DEV_TEMPORAL_PORT: await freePort(),
      DEV_TEMPORAL_UI_PORT: await freePort(),
      DEV_MONGODB_PORT: await freePort(),
      WORKER_HEALTH_PORT: await freePort(),
    };
    const stateDir = path.join(dir, 'full');
    const run = startDev({
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      DEV_STATE_DIR: stateDir,
      DEV_LOCAL_LLM_URLS: `http://127.0.0.1:${await freePort()}/v1,${llm.baseUrl}`,
    });
    try {
      await waitUntilRunning(run);
    } catch (err) {
      await llm.close();
      throw err;
    }

    const uiUrl = printed(run, 'Temporal Web UI');
    const demoKey = printed(run, 'Demo API key');
    expect(printed(run, 'API')).toBe(`http://127.0.0.1:${ports.API_PORT}/api/v1`);
    expect(uiUrl).toBe(`http://127.0.0.1:${ports.DEV_TEMPORAL_UI_PORT}`);
    expect(run.output()).toContain(`${path.join(stateDir, 'logs')}/{api,worker,temporal,mongodb}.log`);

    const readyz = await fetch(`http://127.0.0.1:${ports.API_PORT}/readyz`);
    expect(readyz.status).toBe(200);
    expect(await readyz.json()).toEqual({ data: { status: 'ready', mongodb: 'up', temporal: 'up' }, error: null });
    expect((await fetch(uiUrl!)).status).toBe(200);
    // The console is built and served, at the URL it prints.
    expect(printed(run, 'Console')).toBe(`http://127.0.0.1:${ports.API_PORT}/console/`);
    const consolePage = await fetch(`http://127.0.0.1:${ports.API_PORT}/console/`);
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toContain('<div id="root">');
    expect((await fetch(`http://127.0.0.1:${ports.WORKER_HEALTH_PORT}/readyz`)).status).toBe(200);

    // The worker's URLs are printed, metrics included (the Temporal SDK's on a free port of their own).
    expect(printed(run, 'Worker')).toBe(`http://127.0.0.1:${ports.WORKER_HEALTH_PORT}/readyz`);
    expect(run.output()).toContain(`metrics http://127.0.0.1:${ports.WORKER_HEALTH_PORT}/metrics`);
    expect((await fetch(`http://127.0.0.1:${ports.WORKER_HEALTH_PORT}/metrics`)).status).toBe(200);
    const sdkMetrics = await fetch(printed(run, 'Worker SDK')!);
    expect(sdkMetrics.status).toBe(200);
    expect(await sdkMetrics.text()).toContain('temporal_');
    // The CLI's export lines name this stack's API, key and database.
    expect(run.output()).toContain(`export STEPWISE_URL=http://127.0.0.1:${ports.API_PORT}\n`);
    expect(run.output()).toContain(`export MONGODB_URI=mongodb://127.0.0.1:${ports.DEV_MONGODB_PORT}`);

    // No provider configured: the local server found on a probed URL is used, and the banner says so; an agent
    // step with no model of its own (the system Summarizer) runs on it.
    expect(run.output()).toContain(`local server at ${llm.baseUrl} (serves llama3.2); default model compat:llama3.2`);
    const auth = { Authorization: `Bearer ${printed(run, 'Demo API key')}`, 'Content-Type': 'application/json' };
    const apiV1 = `http://127.0.0.1:${ports.API_PORT}/api/v1`;
    const created = await fetch(`${apiV1}/workflows`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'local', steps: [{ id: 'sum', template_id: 'tpl_sys_summarizer', input: 'text' }] }),
    });
    expect(created.status).toBe(201);
    const workflow = (await created.json()) as { data: { id: string; warnings?: unknown } };
    expect(workflow.data.warnings).toBeUndefined();
    const started = await fetch(`${apiV1}/workflows/${workflow.data.id}/run`, { method: 'POST', headers: auth });
    const { data: runStarted } = (await started.json()) as { data: { status_url: string } };
    let status: { status: string; outputs: Record<string, unknown> } | undefined;
    await waitFor(
      'the agent run on the local model to end',
      async () => {
        status = ((await (await fetch(runStarted.status_url, { headers: auth })).json()) as { data: typeof status })
          .data;
        return ['completed', 'failed', 'cancelled', 'timed_out'].includes(status!.status);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(status).toMatchObject({ status: 'completed', outputs: { sum: 'A summary from the local model' } });
    expect(model.requests).toHaveLength(1);
    await llm.close();

    // The printed demo key is a real key of user "demo" in the database the stack started, and its file is private.
    const database = await connectDatabase({
      uri: `mongodb://127.0.0.1:${ports.DEV_MONGODB_PORT}`,
      dbName: 'stepwise',
    });
    try {
      const demo = await findUserByName(database.db, 'demo');
      expect((await authenticateKey(database.db, demoKey!))?.user_id).toBe(demo?._id);
    } finally {
      await database.close();
    }
    expect(fs.readFileSync(path.join(stateDir, 'demo-key'), 'utf8').trim()).toBe(demoKey);
    expect(fs.statSync(path.join(stateDir, 'demo-key')).mode & 0o777).toBe(0o600);
    // Data went to the throwaway folder, not the repo's.
    expect(fs.existsSync(path.join(stateDir, 'data', 'temporal.db'))).toBe(true);

    // Everything it started, as seen while running: temporal, mongodb, worker, api (each in its own group) and helpers.
    const names = commandLines(run.seen);
    for (const part of ['server start-dev', 'Launcher', 'api/server.ts', 'temporal/main.ts']) {
      expect(names.filter((n) => n.includes(part))).toHaveLength(1);
    }

    // Payloads are encrypted with a key the stack generated and keeps (0600); the Web UI was started with the API's
    // codec endpoint and its token, and that endpoint decrypts what this key sealed, for the UI's origin.
    const secretsFile = path.join(stateDir, 'codec-secrets');
    expect(fs.statSync(secretsFile).mode & 0o777).toBe(0o600);
    const secrets = Object.fromEntries(
      [...fs.readFileSync(secretsFile, 'utf8').matchAll(/^(\w+)=(.+)$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    const keys = parseCodecKeys(secrets.PAYLOAD_CODEC_KEYS ?? '').keys;
    const token = secrets.CODEC_ACCESS_TOKEN ?? '';
    expect(keys).toHaveLength(1);
    expect(token.length).toBeGreaterThanOrEqual(32);
    const codecUrl = `http://127.0.0.1:${ports.API_PORT}/codec/${token}`;
    expect(names.find((n) => n.includes('server start-dev'))).toContain(`--ui-codec-endpoint ${codecUrl} `);
    // What the Web UI itself is configured with (and so what every visitor's browser calls).
    const settings = (await (await fetch(`${uiUrl}/api/v1/settings`)).json()) as { Codec?: { Endpoint?: string } };
    expect(settings.Codec?.Endpoint).toBe(codecUrl);
    expect(run.output()).not.toContain(token);
    const sealed = await new EncryptionCodec(keys).encode([defaultPayloadConverter.toPayload('hello')]);
    const decoded = await fetch(`${codecUrl}/decode`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', Origin: uiUrl! },
      body: JSON.stringify({ payloads: sealed.map(payloadToJson) }),
    });
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe(uiUrl);
    const body = (await decoded.json()) as { payloads: JsonPayload[] };
    expect(defaultPayloadConverter.fromPayload(payloadFromJson(body.payloads[0]!))).toBe('hello');

    await stopAndExpectNothingLeft(run);
    for (const port of Object.values(ports)) expect(await isPortOpen(port)).toBe(false);
  });

  it('starts no server of its own when TEMPORAL_ADDRESS and MONGODB_URI are set', async () => {
    const apiPort = await freePort();
    // Ports a started server would take: they must stay closed.
    const unusedTemporal = await freePort();
    const unusedMongo = await freePort();
    const run = startDev({
      API_PORT: String(apiPort),
      TEMPORAL_ADDRESS: process.env.STEPWISE_TEST_TEMPORAL_ADDRESS!,
      MONGODB_URI: process.env.STEPWISE_TEST_MONGODB_URI!,
      MONGODB_DB: uniqueId('dev_'),
      TEMPORAL_TASK_QUEUE: uniqueId('dev-queue-'),
      DEV_TEMPORAL_PORT: String(unusedTemporal),
      DEV_MONGODB_PORT: String(unusedMongo),
      DEV_STATE_DIR: path.join(dir, 'external'),
      DEV_LOCAL_LLM_URLS: `http://127.0.0.1:${await freePort()}/v1`,
    });
    await waitUntilRunning(run);
    expect(run.output()).toContain(`temporal: using TEMPORAL_ADDRESS=${process.env.STEPWISE_TEST_TEMPORAL_ADDRESS}`);
    // No provider and no local server: the banner says what agent steps would do and how to get a model.
    expect(run.output()).toContain('none configured: agent steps (default model openai:gpt-4o-mini) fail');
    expect(run.output()).toContain('ollama serve');
    // Another stack's database: not printed (the CLI finds it where the user configured it).
    expect(run.output()).not.toContain('export MONGODB_URI');
    expect(run.output()).toContain('mongodb: using MONGODB_URI');
    expect((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status).toBe(200);

    const names = commandLines(run.seen);
    expect(
      names.filter((n) => n.includes('server start-dev') || n.includes('Launcher') || n.includes('mongod')),
    ).toEqual([]);
    expect(names.filter((n) => n.includes('api/server.ts') || n.includes('temporal/main.ts'))).toHaveLength(2);
    expect(await isPortOpen(unusedTemporal)).toBe(false);
    expect(await isPortOpen(unusedMongo)).toBe(false);

    await stopAndExpectNothingLeft(run);
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
        DEV_STATE_DIR: path.join(dir, 'refused'),
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
