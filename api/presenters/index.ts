export * from './common';
export * from './template';
export * from './workflow';
export * from './run';
export * from './run-event';
export * from './approval';
export * from './run-search';
export * from './hook';
