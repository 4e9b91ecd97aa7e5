/**
 * An MCP tool call is observable: the callMcpTool activity (MockActivityEnvironment, real database, the SDK-built
 * failure server) makes a `tools/call <tool>` span and sends its W3C trace context in the request's `_meta`, and the
 * worker's metrics count the call by method and outcome, without server or tool names in the labels.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Registry } from 'prom-client';
import type { Database } from '../../db/client';
import { insertMcpServer, newMcpServerId } from '../../db/mcp-servers';
import { putTranscriptEntry } from '../../db/transcripts';
import { createWorkerMetrics } from '../../temporal/metrics';
import { createMcpToolActivities } from '../../temporal/activities/agent/mcp-tools';
import type { CallMcpToolInput } from '../../temporal/activities/agent/types';
import { openTestDb, silentLogger, testConfig, uniqueId } from '../helpers/stack';
import { startFailureServer, type FailureServer } from './mcp-test-servers';

describe('MCP call tracing and metrics', () => {
  let server: FailureServer;
  let database: Database;

  beforeAll(async () => {
    server = await startFailureServer();
    database = await openTestDb(testConfig());
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
    await server?.close();
  });

  it('spans the call, passes traceparent in _meta, and counts it by outcome', async () => {
    const config = testConfig({ HTTP_ALLOWED_HOSTS: server.host });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const registry = new Registry();
    const activities = createMcpToolActivities({
      config,
      db: database.db,
      logger: silentLogger,
      metrics: createWorkerMetrics(registry),
      tracer: provider.getTracer('test'),
    });
    const owner = uniqueId('usr_');
    const serverId = newMcpServerId();
    const now = new Date();
    await insertMcpServer(database.db, {
      _id: serverId,
      owner_id: owner,
      name: 'ops',
      url: server.url,
      auth_type: 'none',
      credentials: null,
      allowed_tools: null,
      created_at: now,
      updated_at: now,
    });
    const runId = uniqueId('run_');
    await putTranscriptEntry(
      database.db,
      { runId, stepId: 'ask', seq: 2, attempt: 1 },
      {
        kind: 'assistant',
        turn: 1,
        text: null,
        tool_calls: [{ id: 'c1', name: 'ops__lookup', args: { key: 'k9' } }],
        usage: { input_tokens: 1, output_tokens: 1 },
        finish_reason: 'tool-calls',
        final: false,
      },
    );
    const req: CallMcpToolInput = {
      run_id: runId,
      step_id: 'ask',
      owner_id: owner,
      turn: 1,
      assistant_seq: 2,
      call_index: 0,
      seq: 3,
      url: server.url,
      tool: { name: 'ops__lookup', server_id: serverId, tool: 'lookup', retry: 'retry', refused: false },
      timeout_ms: 10_000,
      max_attempts: 3,
    };
    const result = await new MockActivityEnvironment().run(activities.callMcpTool, req);
    expect(result).toEqual({ ok: true, truncated: false });

    const span = exporter.getFinishedSpans().find((s) => s.name === 'tools/call lookup');
    expect(span?.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'lookup' });
    const call = server.callsOf('lookup').at(-1)!;
    const { traceId, spanId } = span!.spanContext();
    expect(call.meta?.traceparent).toBe(`00-${traceId}-${spanId}-01`);

    const text = await registry.metrics();
    expect(text).toContain('stepwise_mcp_requests_total{method="call_tool",outcome="ok"} 1');
    expect(text).not.toMatch(/stepwise_mcp_requests_total\{[^}]*(ops|lookup)/);
  });
});
