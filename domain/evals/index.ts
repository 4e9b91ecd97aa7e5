/** Evals' pure core: scorer declarations, compile-at-creation, scoring, comparison and the JUnit writer. */
export * from './declarations';
export * from './sample';
export * from './results';
export * from './compile';
export * from './score';
export * from './judge';
export * from './trajectory';
export * from './compare';
export * from './summary';
export * from './stats';
export * from './junit';
export { parseFieldPath, selectField, formatFieldPath, type FieldPath } from './field-path';
