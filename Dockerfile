# trunk-exporter container image. Build: docker build -t trunk-exporter . (or buildah bud, see
# docs/deployment.md#container-image). Run: mount a config at /etc/trunk-exporter/config.yaml and
# give the API key (TRUNK_API_KEY or trunk.apiKeyFile) or the token (TRUNK_API_TOKEN or
# trunk.tokenFile); `--demo` needs neither.

# Any base image must have Node.js >= 22.19 (package.json engines: undici 8 needs it); the final
# stage runs the exporter's own version check, so an older one fails the build, not the pod.

# Compiles TypeScript to dist/ with the dev dependencies.
FROM node:24-bookworm-slim AS build
# Only for builds behind a TLS-intercepting proxy: a CA bundle (mounted into the build) npm trusts.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle.ts scripts/check-node-version.mjs ./scripts/
COPY src ./src
RUN npm run build

# Production dependencies only, in their own stage so the final image gets no npm cache.
FROM node:24-bookworm-slim AS dependencies
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# glibc's malloc otherwise raises its mmap threshold once the first large buffer is freed, then keeps
# every later page-sized buffer (one per render of a large /metrics page) in its heap, and gives busy
# threads arenas of their own, each keeping what its thread freed (docs/benchmarks.md#memory).
ENV MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=131072
# V8's young generation kept to two semi-spaces of 1 MB: it otherwise grows several times larger
# while a poll cycle parses its answers, and stays (docs/benchmarks.md#page-per-merge-queue-api-v2).
ENV NODE_OPTIONS=--max-semi-space-size=1
WORKDIR /app
# Everything stays owned by root and read-only to the process: the exporter writes nothing to disk
# (logs go to stdout), so the root filesystem can be mounted read-only.
COPY package.json ./
COPY bin ./bin
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/bundle ./bundle
RUN chmod 0755 bin/trunk-exporter.js \
  && ln -s /app/bin/trunk-exporter.js /usr/local/bin/trunk-exporter \
  && mkdir -p /etc/trunk-exporter \
  && trunk-exporter --version
# The node user of the base image, by number so Kubernetes can check runAsNonRoot.
USER 1000:1000
EXPOSE 9740
# No curl in the slim image: node itself asks /healthz. Set the URL if server.port is not 9740.
ENV TRUNK_EXPORTER_HEALTHCHECK_URL=http://127.0.0.1:9740/healthz
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.TRUNK_EXPORTER_HEALTHCHECK_URL).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["trunk-exporter"]
CMD ["--config", "/etc/trunk-exporter/config.yaml"]
