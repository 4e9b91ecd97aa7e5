/** Request schema of the codec endpoint: Temporal's remote codec protocol (Payloads as protobuf JSON). */
import { z } from 'zod';

const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'base64');

export const codecBody = z.object({
  payloads: z.array(
    z.object({
      metadata: z.record(z.string(), base64).nullish(),
      data: base64.nullish(),
    }),
  ),
});

export const codecOperation = z.enum(['encode', 'decode']);
