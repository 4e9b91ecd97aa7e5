/**
 * A workflow history as searchable text: every byte field rendered as UTF-8 (so a JSON payload in clear shows its
 * content, where JSON.stringify would print a Uint8Array as numbers), optionally after decoding each payload with a
 * codec — to see what Temporal stores, and what the Web UI shows through the codec endpoint.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';

function isPayload(value: object): value is Payload {
  const v = value as { metadata?: unknown; data?: unknown };
  return v.data instanceof Uint8Array && typeof v.metadata === 'object' && v.metadata !== null;
}

export async function historyText(value: unknown, codec?: PayloadCodec): Promise<string> {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return (await Promise.all(value.map((v) => historyText(v, codec)))).join('\n');
  if (value !== null && typeof value === 'object') {
    if (codec && isPayload(value)) {
      const [decoded] = await codec.decode([value]);
      return historyText({ metadata: decoded!.metadata, data: decoded!.data });
    }
    const parts = await Promise.all(
      Object.entries(value).map(async ([k, v]) => `${k}: ${await historyText(v, codec)}`),
    );
    return parts.join('\n');
  }
  return String(value);
}
