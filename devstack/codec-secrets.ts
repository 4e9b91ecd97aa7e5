/**
 * The dev stack's payload-encryption key and codec access token: generated on the first `npm run dev`, kept in a 0600
 * file under the ignored state folder, and reused at every start — a new key would leave earlier runs unreadable.
 * Values set in the environment win (and are not written down).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { generateCodecKey } from '../shared/codec/keys';

export interface CodecSecrets {
  /** PAYLOAD_CODEC_KEYS in configuration form. */
  keys: string;
  /** CODEC_ACCESS_TOKEN. */
  token: string;
}

/** Reads `file` (PAYLOAD_CODEC_KEYS=… / CODEC_ACCESS_TOKEN=… lines), fills what is missing, and rewrites it if needed. */
export function ensureCodecSecrets(file: string, fromEnv: Partial<CodecSecrets> = {}): CodecSecrets {
  const stored = readSecrets(file);
  const secrets: CodecSecrets = {
    keys: fromEnv.keys ?? stored.PAYLOAD_CODEC_KEYS ?? generateCodecKey(),
    token: fromEnv.token ?? stored.CODEC_ACCESS_TOKEN ?? randomBytes(32).toString('hex'),
  };
  const toStore = {
    PAYLOAD_CODEC_KEYS: fromEnv.keys ? stored.PAYLOAD_CODEC_KEYS : secrets.keys,
    CODEC_ACCESS_TOKEN: fromEnv.token ? stored.CODEC_ACCESS_TOKEN : secrets.token,
  };
  if (
    toStore.PAYLOAD_CODEC_KEYS !== stored.PAYLOAD_CODEC_KEYS ||
    toStore.CODEC_ACCESS_TOKEN !== stored.CODEC_ACCESS_TOKEN
  )
    writeSecrets(file, toStore);
  return secrets;
}

function readSecrets(file: string): Record<string, string | undefined> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && line.slice(eq + 1).trim()) out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

function writeSecrets(file: string, values: Record<string, string | undefined>): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const text = Object.entries(values)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
  // As the demo key: 0600 from the first byte, renamed into place so a crash never leaves half a key.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(
    tmp,
    `# npm run dev: payload encryption key and codec token (keep; losing the key loses old runs)\n${text}`,
    {
      mode: 0o600,
    },
  );
  fs.renameSync(tmp, file);
}
