# syntax=docker/dockerfile:1
# The image of every deployable; the build argument DEPLOYABLE chooses which (decision 0193). From the repository root:
#   docker build --build-arg DEPLOYABLE=crm -t svc-crm:dev .     # gateway, crm, tasks, chat, files or webhooks
# Stage 1 installs the workspace and bundles the deployable into plain JavaScript (deploy/scripts/bundle.mjs,
# esbuild); stage 2 is Node 22 with the bundle alone: no node_modules, no tsx, no compile at start (decision 0105).
# The ports are the deployable's own defaults (README, Configuration); compose and the charts set them as they need.

FROM node:22-bookworm-slim AS build
ARG DEPLOYABLE
WORKDIR /src
# Manifests first: the dependency layer is rebuilt only when one of them changes. npm ci needs every workspace's
# package.json (the lock file lists them all); --ignore-scripts: nothing here needs an install script.
COPY package.json package-lock.json ./
COPY proto/package.json proto/
COPY services/platform/package.json services/platform/
COPY services/crm/package.json services/crm/
COPY services/tasks/package.json services/tasks/
COPY services/chat/package.json services/chat/
COPY services/files/package.json services/files/
COPY services/webhooks/package.json services/webhooks/
COPY packages/client/package.json packages/client/
COPY packages/webhook-verify/package.json packages/webhook-verify/
COPY gateway/package.json gateway/
COPY test/package.json test/
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.base.json ./
COPY deploy/scripts/bundle.mjs deploy/scripts/
COPY proto proto
# Every deployable's source: esbuild takes only what the chosen one imports into its bundle.
COPY services services
COPY gateway gateway
# --image: exactly one deployable, so an unset DEPLOYABLE fails the build instead of bundling all six.
RUN node deploy/scripts/bundle.mjs --image ${DEPLOYABLE} --out /out

FROM node:22-bookworm-slim AS runtime
ARG DEPLOYABLE
ENV NODE_ENV=production \
    HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=root:root /out/${DEPLOYABLE}/ ./
# The files service's local storage folder, owned by the user, so a volume mounted there (compose's files-data, a
# chart's extraVolumes) starts writable to it; an unused empty folder in the other images.
RUN mkdir -p /data/files && chown node:node /data/files
# The official image's unprivileged user (uid/gid 1000), as the charts' securityContext expects; the files stay
# root-owned and read-only to it, so the root filesystem can be mounted read-only.
USER node
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["node", "healthcheck.mjs"]
# Services also hold `node migrate.mjs` (the charts' migration Job and compose's <name>-migrate run it; the service
# also applies pending migrations at start) and `node replay.mjs`.
# main.mjs.map is beside the bundle: NODE_OPTIONS=--enable-source-maps maps stack traces to the TypeScript sources,
# at the cost of about 150 MiB of memory per process (bench/images), so it is off by default.
CMD ["node", "main.mjs"]
