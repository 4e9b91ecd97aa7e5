import fs from 'node:fs';
import type { MongoServer, TemporalServer } from '../../devstack/servers';

export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as Record<string, unknown>).__stepwiseStack as
    { temporal: TemporalServer; mongo: MongoServer; dir: string } | undefined;
  if (!stack) return;
  await Promise.all([stack.temporal.process.stop(5_000), stack.mongo.process.stop(5_000)]);
  fs.rmSync(stack.dir, { recursive: true, force: true });
}
