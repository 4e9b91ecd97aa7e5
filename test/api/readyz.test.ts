/**
 * /readyz follows the database: 503 while this test's own MongoDB server is stopped, 200 again once it is back on the
 * same port — the API's one MongoClient reconnects by itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from '../../devstack/process';
import { startMongo, startTemporal, type MongoServer, type TemporalServer } from '../../devstack/servers';
import { startTestApi, testConfig, type TestApi } from '../helpers/stack';

describe('/readyz when the database goes away and comes back', () => {
  let dir: string;
  let mongo: MongoServer | undefined;
  let api: TestApi;
  let opts: { port: number; dataDir: string; logFile: string };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-readyz-'));
    opts = { port: await freePort(), dataDir: path.join(dir, 'mongodb'), logFile: path.join(dir, 'mongodb.log') };
    mongo = await startMongo(opts, () => undefined);
    api = await startTestApi(testConfig({ MONGODB_URI: mongo.uri }));
  });
  afterAll(async () => {
    await api?.close();
    await mongo?.process.stop(2_000);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const readyz = async () => {
    const res = await api.http.get('/readyz');
    return { status: res.status, body: res.body as { data: unknown; error: string | null } };
  };

  it('answers 200, then 503 naming MongoDB while it is down, then 200 once it is back', async () => {
    expect((await readyz()).status).toBe(200);

    await mongo!.process.stop(10_000);
    mongo = undefined;
    let down = await readyz();
    await waitFor('/readyz to report the database down', async () => (down = await readyz()).status === 503, {
      timeoutMs: 30_000,
    });
    expect(down.body).toEqual({ data: null, error: expect.stringContaining('MongoDB') });
    expect(down.body.error).not.toContain('Temporal');

    mongo = await startMongo(opts, () => undefined);
    let up = down;
    await waitFor('/readyz to recover', async () => (up = await readyz()).status === 200, {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    expect(up.body).toEqual({ data: { status: 'ready', mongodb: 'up', temporal: 'up' }, error: null });
  });
});

/** The same for Temporal: this test's own headless dev server, stopped and started again on the same port. */
describe('/readyz when Temporal goes away and comes back', () => {
  let dir: string;
  let temporal: TemporalServer | undefined;
  let api: TestApi;
  let opts: { port: number; uiPort: number; headless: boolean; logFile: string };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-readyz-t-'));
    opts = { port: await freePort(), uiPort: 0, headless: true, logFile: path.join(dir, 'temporal.log') };
    temporal = await startTemporal(opts, () => undefined);
    api = await startTestApi(testConfig({ TEMPORAL_ADDRESS: temporal.address }));
  });
  afterAll(async () => {
    await api?.close();
    await temporal?.process.stop(2_000);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 naming Temporal while it is down, and 200 once it is back', async () => {
    const readyz = async () => {
      const res = await api.http.get('/readyz');
      return { status: res.status, body: res.body as { data: unknown; error: string | null } };
    };
    expect((await readyz()).status).toBe(200);

    await temporal!.process.stop(10_000);
    temporal = undefined;
    let down = await readyz();
    await waitFor('/readyz to report Temporal down', async () => (down = await readyz()).status === 503, {
      timeoutMs: 30_000,
    });
    expect(down.body).toEqual({ data: null, error: expect.stringContaining('Temporal') });
    expect(down.body.error).not.toContain('MongoDB');

    temporal = await startTemporal(opts, () => undefined);
    await waitFor('/readyz to recover', async () => (await readyz()).status === 200, {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
  });
});
