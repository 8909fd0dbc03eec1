# syntax=docker/dockerfile:1
#
# Ingress gateway image.
#
#   docker build -t ingress-gateway .
#   docker run --rm -p 8080:8080 ingress-gateway            # embedded mode
#   docker compose -f deploy/docker-compose.yml up --build  # with Redis + Kafka
#
# Base image: Debian bookworm-slim rather than Alpine. Every runtime dependency is
# plain JavaScript, so Alpine would work, but glibc keeps the image identical in
# behaviour to CI and developer machines (musl's DNS resolver differs from glibc's,
# which matters for broker and Redis host names inside Kubernetes), and the build
# stage's native dev tools (@swc/core) ship glibc binaries first.

# Pinned by digest, so a rebuild gets the same base (a tag moves with every upstream rebuild).
# This is the multi-platform index of node:24.18.1-bookworm-slim (= node:24-bookworm-slim on
# 2026-07-30), as docker-library/repo-info records it (repos/node/remote/24-bookworm-slim.md).
# To move to the current build: `docker buildx imagetools inspect node:24-bookworm-slim`
# prints its digest; put the version and digest here (Dependabot's and Renovate's docker
# updaters keep such a line current).
ARG NODE_IMAGE=node:24.18.1-bookworm-slim@sha256:235600a8101ab264e117b1768e925532262668dc9b581ef1dd7d96ced463b8e7

# ---------------------------------------------------------------------------
# build: install every dependency, compile TypeScript, then drop dev dependencies
# ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Dependencies first, so this layer is cached until the lockfile changes; `npm ci` installs
# exactly what package-lock.json locks (it holds every platform's optional native packages).
# npm ci's postinstall applies patches/ (patch-package, a dev dependency: see docs/choices.md).
COPY package.json package-lock.json ./
COPY patches ./patches
COPY scripts/apply-patches.js ./scripts/
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-kinds.js ./scripts/
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---------------------------------------------------------------------------
# runtime: Node 24 LTS, production dependencies and the compiled output only
# ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime

ENV NODE_ENV=production \
    PORT=8080

WORKDIR /app

# Files stay owned by root and are only readable by the process: the app cannot
# modify its own code. The one writable place is ./data, where the embedded-mode
# file sink (EVENTS_DIR=./data/events) appends when KAFKA_BROKERS is not set.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/data && chown node:node /app/data

# The base image's unprivileged `node` user, by number (uid/gid 1000) so that
# Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 1000:1000

# 8080: senders (webhooks, channels, /healthz). 8081: the admin listener (/admin, /metrics,
# /readyz): publish it to operators and Prometheus only, never to senders.
EXPOSE 8080 8081

# No curl/wget in slim images: node itself probes liveness (/healthz, not /readyz,
# so a Redis or Kafka outage never gets the container restarted).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz',{signal:AbortSignal.timeout(2000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# Node runs as PID 1. That is fine here: the app installs its own SIGTERM/SIGINT
# handlers (readiness false, finish in-flight requests, flush the sink, exit 0
# within SHUTDOWN_GRACE_MS) and spawns no child processes, so neither signal
# forwarding nor zombie reaping from tini is needed. If you want an init anyway,
# run with `docker run --init` (compose: `init: true`).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
