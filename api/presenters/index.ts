export * from './common';
export * from './template';
