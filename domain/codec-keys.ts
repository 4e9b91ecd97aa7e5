/**
 * Payload-encryption keys as configuration gives them: `PAYLOAD_CODEC_KEYS=keyid:base64,keyid:base64`. The first key
 * encrypts; every listed key decrypts, so a rotated-out key stays listed (after the new first one) for as long as
 * histories written with it are kept.
 *
 * Pure parsing, so that config.ts can check the setting without importing a layer; generating a key (randomness)
 * lives with the codec in shared/codec/keys.ts.
 */

export interface CodecKey {
  /** Written, in clear, into each payload's metadata: names the key, never reveals it. */
  id: string;
  /** 32 bytes (AES-256). */
  key: Buffer;
}

export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const KEY_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Parses the comma-separated list. Returns the keys or the list of problems (never echoing key material, since the
 * message ends up in the process output).
 */
export function parseCodecKeys(value: string): { keys: CodecKey[]; problems: string[] } {
  const keys: CodecKey[] = [];
  const problems: string[] = [];
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  entries.forEach((entry, i) => {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon);
    const material = colon < 0 ? '' : entry.slice(colon + 1);
    if (!KEY_ID_PATTERN.test(id)) {
      problems.push(`entry ${i + 1}: expected keyid:base64 with a key id of letters, digits, ".", "_" or "-"`);
      return;
    }
    const key = Buffer.from(material, 'base64');
    if (!BASE64.test(material) || key.length !== KEY_BYTES) {
      problems.push(`key "${id}": must be ${KEY_BYTES} random bytes in base64 (openssl rand -base64 32)`);
      return;
    }
    if (keys.some((k) => k.id === id)) {
      problems.push(`key "${id}" is listed twice`);
      return;
    }
    keys.push({ id, key });
  });
  return { keys, problems };
}

/** The configuration form of `keys` (for handing the same keys to a child process). */
export function formatCodecKeys(keys: readonly CodecKey[]): string {
  return keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');
}

/** A JSON value sealed with these keys (shared/codec/sealed-json.ts seals and opens it; storage keeps it as is). */
export interface SealedJson {
  /** The sealed payload's metadata (encoding and key id, in clear), base64 per entry. */
  metadata: Record<string, string>;
  /** Nonce ‖ ciphertext ‖ tag, base64. */
  data: string;
}
