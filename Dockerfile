# One image for both Stepwise processes: the API (default command) and the Temporal worker (compose overrides the
# command). TypeScript runs through tsx, as in development; the workflow bundle and the web console are built once
# here, at build time.

# The console's static files, built with the dev dependencies (Vite, React) that the runtime image leaves out.
FROM node:20-bookworm-slim AS console
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY console ./console
RUN npm run build:console

FROM node:20-bookworm-slim

WORKDIR /app
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false

# Dependencies first, so a code change does not reinstall them: `npm ci` installs exactly the locked versions.
# glibc (bookworm, not alpine): the Temporal worker's native core ships glibc builds.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json config.ts ./
COPY domain ./domain
COPY shared ./shared
COPY temporal ./temporal
COPY api ./api
COPY db ./db
COPY cli ./cli
COPY client ./client
COPY --from=console /app/console/dist ./console/dist

# The worker loads this prebuilt bundle instead of running webpack at every start.
RUN npm run build:workflows -- /app/dist \
    && mv /app/dist/workflow-bundle-*.js /app/dist/workflow-bundle.js
ENV WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js

USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "api/server.ts"]
