/** `npm run build:workflows`: prebuilds the workflow bundle (the Docker image runs this at build time). */
import { ensureWorkflowBundle } from './bundle';

ensureWorkflowBundle(process.argv[2])
  .then((file) => process.stdout.write(`${file}\n`))
  .catch((err: unknown) => {
    process.stderr.write(`bundling failed: ${String(err)}\n`);
    process.exit(1);
  });
