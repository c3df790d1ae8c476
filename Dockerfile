# syntax=docker/dockerfile:1
#
# mcp-prompt-gateway container image.
#
#   docker build -t mcp-prompt-gateway .
#   docker run -p 8080:8080 \
#     -v "$PWD/gateway.json:/etc/mcp-prompt-gateway/gateway.json:ro" \
#     -e GATEWAY_CURSOR_SECRET=... mcp-prompt-gateway
#
# Notes for the mounted config:
# - listen.port must stay 8080 (the default): EXPOSE and HEALTHCHECK assume it.
# - The child of a stdio upstream runs in the config file's directory
#   (/etc/mcp-prompt-gateway) unless it sets "cwd", so use absolute paths, e.g.
#   "args": ["/app/examples/prompt-server.mjs"]. Dev dependencies such as
#   @modelcontextprotocol/server-everything (used by gateway.example.json) are not in the image.
# - PID 1 is tini: it reaps exited grandchildren of stdio upstreams (otherwise zombies
#   that make every child's stop wait its full killGraceMs) and passes SIGTERM/SIGINT/SIGHUP
#   to the gateway, which stops gracefully or reloads its config.
# - Probes: GET /healthz (alive) and GET /readyz (ready: required upstreams connected).
# - Prometheus: GET /metrics on the same port (or on metrics.listen). The dashboard is off on
#   0.0.0.0 unless dashboard.enabled is set; its page files are copied into dist/ by the build.

# ---- build: compile TypeScript (src/ -> dist/, per tsconfig.json rootDir/outDir) ----
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies + compiled output only ----
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app

RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*

# package.json must sit at /app/package.json: dist/version.js reads ../package.json.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

# Files stay owned by root (read-only for the runtime user); the gateway writes nothing to disk.
COPY --from=build /app/dist ./dist
COPY config ./config
COPY examples ./examples
# The image is a distribution too: it carries the license text, and what changed.
COPY LICENSE CHANGELOG.md ./

# The config file is mounted here (read-only is fine).
RUN mkdir -p /etc/mcp-prompt-gateway

# Unprivileged user that ships with the official node images (uid/gid 1000).
USER node

EXPOSE 8080

# No curl/wget in slim images: probe with node's built-in fetch.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz', { signal: AbortSignal.timeout(4000) }).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/cli.js"]
# --host 0.0.0.0: inside a container the gateway must bind all interfaces, or the published
# port cannot reach it (127.0.0.1 is the container's own loopback). This also turns off the
# SDK's localhost-only Host-header check, so expose the port only behind something that
# controls access (a reverse proxy, a private network), as the listen.host docs say.
CMD ["--config", "/etc/mcp-prompt-gateway/gateway.json", "--host", "0.0.0.0"]
