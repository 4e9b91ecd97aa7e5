export { createCallModelActivity, AGENT_HEARTBEAT_MS, type AgentActivityDeps } from './call-model';
export { createCallToolActivity, TOOL_OUTPUT_LIMIT_BYTES, type CallToolDeps } from './call-tool';
export type * from './types';
