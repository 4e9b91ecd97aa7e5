/**
 * Preloaded into a child API process (with --expose-gc) by tests that measure its heap: SIGUSR2 runs a full
 * collection, so the next heap reading counts live objects only, not garbage a later collection would free.
 */
process.on('SIGUSR2', () => globalThis.gc());
