/** The dev stack's generated encryption key and codec token: created once, private, reused, and overridable. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureCodecSecrets } from '../../devstack/codec-secrets';
import { loadConfig } from '../../config';

describe('dev stack codec secrets', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stepwise-codec-secrets-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('generates a valid key and token once, in a 0600 file, and returns the same ones at the next start', () => {
    const file = path.join(dir, 'state', 'codec-secrets');
    const first = ensureCodecSecrets(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const config = loadConfig({ PAYLOAD_CODEC_KEYS: first.keys, CODEC_ACCESS_TOKEN: first.token });
    expect(config.PAYLOAD_CODEC_KEYS).toHaveLength(1);
    // A new key at every start would leave the runs of the previous one unreadable.
    expect(ensureCodecSecrets(file)).toEqual(first);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['codec-secrets']); // no temporary file left behind
  });

  it('values from the environment win and are not written down; the stored ones stay for later starts', () => {
    const file = path.join(dir, 'codec-secrets');
    const stored = ensureCodecSecrets(file);
    const fromEnv = { keys: `mine:${Buffer.alloc(32, 1).toString('base64')}`, token: 't'.repeat(40) };
    expect(ensureCodecSecrets(file, fromEnv)).toEqual(fromEnv);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain(fromEnv.keys);
    expect(text).not.toContain(fromEnv.token);
    expect(ensureCodecSecrets(file)).toEqual(stored);
  });
});
