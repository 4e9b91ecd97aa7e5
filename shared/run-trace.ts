/** A new run document records the trace of the request starting it, so the run's status leads to its trace. */
import { activeTraceIds } from './tracing';

export function withTraceId<T extends { trace_id?: string }>(doc: T): T {
  const ids = activeTraceIds();
  return ids ? { ...doc, trace_id: ids.trace_id } : doc;
}
