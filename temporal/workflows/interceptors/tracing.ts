/**
 * Workflow interceptors of the bundle (temporal/bundle.ts): Temporal's OpenTelemetry interceptors, active only for
 * an execution whose start carried a trace context (the API's client interceptor adds it when tracing is on). An
 * execution started without one — tracing off, and every history recorded before tracing existed — runs exactly
 * as without interceptors: no spans, no sink calls, no SDK flags, so replay is unchanged and tracing off costs one
 * header lookup per execution. The choice is made once, from the start headers, which are part of the history, so
 * a replay always takes the same branch.
 *
 * Signals, queries and updates pass through untraced: their handlers may run before `execute` has seen the headers.
 *
 * The OpenTelemetry modules are required only by a traced execution: Temporal's reusable sandbox runs a bundle's
 * module code again for every execution, and OpenTelemetry's (hundreds of modules) cost an untraced run several
 * milliseconds of worker CPU for nothing.
 */
import type * as OpenTelemetryWorkflow from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header Temporal's OpenTelemetry interceptors carry the trace context in. */
const TRACE_HEADER = '_tracer-data';

export const interceptors = (): WorkflowInterceptors => {
  let otel:
    | {
        inbound: OpenTelemetryWorkflow.OpenTelemetryInboundInterceptor;
        outbound: OpenTelemetryWorkflow.OpenTelemetryOutboundInterceptor;
        internals: OpenTelemetryWorkflow.OpenTelemetryInternalsInterceptor;
      }
    | undefined;
  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      if (input.headers[TRACE_HEADER] === undefined) return next(input);
      const { OpenTelemetryInboundInterceptor, OpenTelemetryInternalsInterceptor, OpenTelemetryOutboundInterceptor } =
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof OpenTelemetryWorkflow;
      otel = {
        inbound: new OpenTelemetryInboundInterceptor(),
        outbound: new OpenTelemetryOutboundInterceptor(),
        internals: new OpenTelemetryInternalsInterceptor(),
      };
      return otel.inbound.execute(input, next);
    },
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => (otel ? otel.outbound.scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) => (otel ? otel.outbound.scheduleLocalActivity(input, next) : next(input)),
    startChildWorkflowExecution: (input, next) =>
      otel ? otel.outbound.startChildWorkflowExecution(input, next) : next(input),
    signalWorkflow: (input, next) => (otel ? otel.outbound.signalWorkflow(input, next) : next(input)),
    continueAsNew: (input, next) => (otel ? otel.outbound.continueAsNew(input, next) : next(input)),
  };
  const internals: WorkflowInternalsInterceptor = {
    dispose(input, next) {
      // Theirs is async but does its work (disabling the sandbox's context manager, then next) synchronously.
      if (otel) void otel.internals.dispose(input, next);
      else next(input);
    },
  };
  return { inbound: [inbound], outbound: [outbound], internals: [internals] };
};
