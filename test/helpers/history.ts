/**
 * Loads a JSON workflow history (as `temporal workflow show --output json` writes it) into the History proto the
 * replayer takes. The SDK's own historyFromJSON cannot be used in this install: it pairs @temporalio/common's copy of
 * protobufjs with the proto classes of @temporalio/proto's copy ("type must be a Type"). Resolving protobufjs from
 * @temporalio/proto keeps both sides on one copy, in a deduplicated install as well.
 */
import path from 'node:path';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

interface ProtoJson {
  fromJson(type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }): unknown;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const protojson = require(
  require.resolve('protobufjs/ext/protojson', { paths: [path.dirname(require.resolve('@temporalio/proto'))] }),
) as ProtoJson;
const root = patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown };
const historyType = root.lookupType('temporal.api.history.v1.History');

export function historyFromJson(json: unknown): proto.temporal.api.history.v1.History {
  const loaded = protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
  if (!loaded) throw new TypeError('invalid history JSON');
  return loaded as proto.temporal.api.history.v1.History;
}
