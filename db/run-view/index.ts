// The run view shared by the API (status body) and the worker (webhook bodies).
export * from './view';
export * from './outputs';
export * from './build';
export * from './webhooks';
export * from './time';
