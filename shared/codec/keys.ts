/** Generating a payload-encryption key (the parsing and formatting are in domain/codec-keys.ts). */
import { randomBytes } from 'node:crypto';
import { formatCodecKeys, KEY_BYTES } from '../../domain/codec-keys';

/** A fresh key in configuration form, named after today's date so rotations sort and read well. */
export function generateCodecKey(now = new Date()): string {
  const id = `k${now.toISOString().slice(0, 10).replaceAll('-', '')}-${randomBytes(3).toString('hex')}`;
  return formatCodecKeys([{ id, key: randomBytes(KEY_BYTES) }]);
}
