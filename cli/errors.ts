/** A failure the user can fix (unknown user, duplicate name…): printed as one line, exit code 1, no stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
