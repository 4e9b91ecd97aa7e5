/**
 * The service helper on its own servers (not the suite's): start, stop, a second start from the cache, and data that
 * survives a restart of each server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { freePort, isPortOpen } from '../../devstack/process';
import { startMongo, startTemporal, type MongoServer, type TemporalServer } from '../../devstack/servers';
import { uniqueId } from '../helpers/stack';

/** Words the installers print when they download or build something; a cached start prints none of them. */
const INSTALL_STEP = /install|fetch|compil|pip|maven/i;

describe('the service helper (devstack/servers.ts)', () => {
  let dir: string;
  const running: (MongoServer | TemporalServer)[] = [];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-servers-'));
  });
  afterAll(async () => {
    await Promise.all(running.map((s) => s.process.stop(2_000)));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function stop(server: MongoServer | TemporalServer): Promise<void> {
    await server.process.stop(10_000);
    running.splice(running.indexOf(server), 1);
  }

  it('starts MongoDB from the cache, stops it, and reads back after a restart what was written before', async () => {
    const lines: string[] = [];
    const opts = { port: await freePort(), dataDir: path.join(dir, 'mongodb'), logFile: path.join(dir, 'mongodb.log') };
    const first = await startMongo(opts, (m) => lines.push(m));
    running.push(first);
    expect(first.uri).toBe(`mongodb://127.0.0.1:${opts.port}`);

    const marker = uniqueId('doc-');
    const client = new MongoClient(first.uri, { serverSelectionTimeoutMS: 5_000 });
    await client
      .db('persist')
      .collection('things')
      .insertOne({ marker, nested: { n: 1 } });
    await client.close();

    await stop(first);
    expect(first.process.child.exitCode !== null || first.process.child.signalCode !== null).toBe(true);
    expect(await isPortOpen(opts.port)).toBe(false);

    const second = await startMongo(opts, (m) => lines.push(m));
    running.push(second);
    expect(second.process.pid).not.toBe(first.process.pid);
    const again = new MongoClient(second.uri, { serverSelectionTimeoutMS: 5_000 });
    try {
      expect(
        await again
          .db('persist')
          .collection('things')
          .findOne({ marker }, { projection: { _id: 0 } }),
      ).toEqual({
        marker,
        nested: { n: 1 },
      });
    } finally {
      await again.close();
    }
    await stop(second);
    // Both starts came from the cache: no download, no build.
    expect(lines.filter((l) => INSTALL_STEP.test(l))).toEqual([]);
  });

  it('starts Temporal from the cache with its Web UI, stops it, and keeps a workflow across a restart', async () => {
    const lines: string[] = [];
    const opts = {
      port: await freePort(),
      uiPort: await freePort(),
      dbFile: path.join(dir, 'temporal.db'),
      logFile: path.join(dir, 'temporal.log'),
    };
    const first = await startTemporal(opts, (m) => lines.push(m));
    running.push(first);
    expect((await fetch(first.uiUrl)).status).toBe(200);

    // A workflow nobody works on stays open: it is the data that must survive the restart.
    const workflowId = uniqueId('persisted-');
    await withClient(first.address, (client) =>
      client.workflow.start('neverWorked', { taskQueue: uniqueId('nobody-'), workflowId }).then(() => undefined),
    );

    await stop(first);
    expect(await isPortOpen(opts.port)).toBe(false);
    expect(await isPortOpen(opts.uiPort)).toBe(false);

    const second = await startTemporal(opts, (m) => lines.push(m));
    running.push(second);
    const status = await withClient(
      second.address,
      async (client) => (await client.workflow.getHandle(workflowId).describe()).status.name,
    );
    expect(status).toBe('RUNNING');
    await stop(second);
    expect(lines.filter((l) => INSTALL_STEP.test(l))).toEqual([]);
  });
});

async function withClient<T>(address: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address });
  try {
    return await fn(new Client({ connection }));
  } finally {
    await connection.close();
  }
}
