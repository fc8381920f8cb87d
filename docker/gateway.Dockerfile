# syntax=docker/dockerfile:1
# fhir-agent-gateway: dist/ is compiled in a first stage; the runtime stage has only dist/, bin/ and the production
# dependencies, and runs as the unprivileged `node` user. Also used by the one-shot loader service.
# test/dockerfile-steps.test.ts runs this file's RUN lines in a temporary directory (no Docker engine there).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: nothing to compile yet (prepare would build before the sources are copied).
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY evals ./evals
COPY fixtures ./fixtures
RUN npm run build

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# node-llama-cpp (LOCAL_MODEL) is an optional peer, not installed here: add `npm install node-llama-cpp` for it.
# The npm cache is a build cache mount, so it never lands in the image.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY bin ./bin
# The audit file (AUDIT_SINK=file, the default with keys) needs a directory the service user may write; mount a volume there.
RUN mkdir -p /app/audit && chown node:node /app/audit
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/composition/server.js"]
