# fhir-agent-gateway: runs from source with tsx (no build step). Also used by the one-shot loader service.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# tsx is a runtime dependency, so dev dependencies are not needed to run the service or the loader.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .
# The audit file (AUDIT_SINK=file, the default with keys) needs a directory the service user may write; mount a volume there.
RUN mkdir -p /app/audit && chown node:node /app/audit
USER node
EXPOSE 8080
CMD ["npm", "start"]
