# syntax=docker/dockerfile:1
# Build stage: compile TypeScript, then keep production dependencies only.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the prepare script builds, and the sources are copied only below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime stage: non-root, no build tools, works with a read-only root filesystem (nothing is written).
FROM node:24-bookworm-slim
# glibc malloc maps buffers of 1 MiB or more on their own and unmaps them when freed; by default it
# raises that threshold to the largest buffer freed and keeps the freed space: after 16 WebSockets of
# 10 MB, RSS stayed 60-190 MB higher (mallopt(3) M_MMAP_THRESHOLD; docs/memory-budgets.md, BENCHMARKS.md).
ENV NODE_ENV=production \
    CTXGATE_HOST=0.0.0.0 \
    CTXGATE_PORT=8787 \
    MALLOC_MMAP_THRESHOLD_=1048576
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
# Numeric (the image's node user): Kubernetes can only verify runAsNonRoot against a numeric user.
USER 1000:1000
EXPOSE 8787
# The port is the one the container's process was started with (`mock --port 8788` too), else CTXGATE_PORT.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "const a=require('fs').readFileSync('/proc/1/cmdline','utf8').split('\\0'),i=a.indexOf('--port'),p=i>0?a[i+1]:(process.env.CTXGATE_PORT||8787);fetch('http://127.0.0.1:'+p+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/cli.js"]
