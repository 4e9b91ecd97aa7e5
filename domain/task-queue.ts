/** Names shared by the API (starting runs) and the worker (running them). */
export const RUN_WORKFLOW_TYPE = 'runWorkflow';
