/** docs/configuration.md's settings table is the user's reference: every variable of config.ts, with its real default. */
import fs from 'node:fs';
import path from 'node:path';
import { configSchema, loadConfig, type Config } from '../config';
import { repoRoot } from './helpers/run-node';

const doc = fs.readFileSync(path.join(repoRoot, 'docs/configuration.md'), 'utf8');
/** `| \`NAME\` | default | meaning |` rows → name → default cell without backticks. */
const rows = new Map(
  [...doc.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]*) \|/gm)].map((m) => [m[1]!, m[2]!.trim().replace(/`/g, '')]),
);

describe('docs/configuration.md settings table', () => {
  const defaults = loadConfig({});
  const names = Object.keys(configSchema.shape) as (keyof Config)[];

  it('lists every variable config.ts reads, and no other', () => {
    expect(names.filter((n) => !rows.has(n))).toEqual([]);
    expect([...rows.keys()].filter((n) => !(n in configSchema.shape))).toEqual([]);
  });

  it('states each scalar default as config.ts has it', () => {
    const wrong = names
      .filter((n) => ['string', 'number', 'boolean'].includes(typeof defaults[n]))
      .map((n) => [n, String(defaults[n] as string | number | boolean)] as const)
      .filter(([n, value]) => rows.get(n) !== value)
      .map(([n, value]) => `${n}: docs/configuration.md says ${rows.get(n)}, config.ts has ${value}`);
    expect(wrong).toEqual([]);
  });
});
