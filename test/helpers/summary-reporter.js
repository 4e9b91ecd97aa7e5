// Prints the suite's closing line in the plain form CI reads: "N passed, N failed[, N skipped]".
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    // Suites that failed to run (syntax error, failing beforeAll) count as failures even if no test in them ran.
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const line = `${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
    // Written at exit so it comes after the default reporter's summary, as the very last line.
    process.once('exit', () => process.stdout.write(`\n${line}\n`));
  }
}
module.exports = SummaryReporter;
