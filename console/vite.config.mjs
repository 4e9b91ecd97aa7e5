/**
 * The web console's build: a static single-page app served by the API process at /console (api/routes/console.ts).
 * `npm run build:console` writes console/dist; asset names carry content hashes, so they are cached forever and
 * index.html never.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The console must stay small: a warning above this is a regression to look at.
    chunkSizeWarningLimit: 400,
  },
});
