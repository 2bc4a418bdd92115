# HomeClaw Bus: the Core in a container.
#   docker build -t homeclaw-bus:0.1.0 .
#   docker run -d --name homeclaw -p 1883:1883 -p 8765:8765 -v homeclaw-data:/data homeclaw-bus:0.1.0
# Inside the container every listener binds to 0.0.0.0 (a published port must reach it), so the LAN
# rules apply: anonymous MQTT clients are refused (create logins with `homeclaw credentials add`) and
# the HTTP API always needs the admin token (generated into /data/admin.token on first start).

# Debian 12, as on the development machine: its glibc (2.36) is the one the pinned Chroma binding
# (chromadb-js-bindings-linux-x64-gnu 1.0.5) loads on.
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile TypeScript, then keep only the production dependencies ----------------------------
FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles from source when no prebuilt binary matches this platform.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts from the dev tools (the MCP Inspector's postinstall, esbuild); the one native
# production dependency is built explicitly.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY tsconfig.json ./
COPY src ./src
COPY plugins ./plugins
COPY topics ./topics
# The web dashboard's source; npm run build turns it into dist/web.
COPY web ./web
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime ------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOMECLAW_DATA_DIR=/data \
    HOMECLAW_MQTT_HOST=0.0.0.0 \
    HOMECLAW_HTTP_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/plugins ./plugins
COPY --from=build /app/topics ./topics
COPY config ./config
# The image's own unprivileged user (uid 1000) owns only the data volume.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# MQTT, MQTT over WebSocket, HTTP API
EXPOSE 1883 9001 8765
# Liveness only: a down LLM or Chroma must not get a working Core restarted (/readyz tells those apart).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HOMECLAW_HTTP_PORT||8765)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "--v8-pool-size=1", "/app/dist/src/cli.js"]
CMD ["start"]
