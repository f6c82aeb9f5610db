# Production image: the app only; Postgres comes from DATABASE_URL (see docker-compose.yml).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY compat ./compat
COPY scripts ./scripts
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=8000 HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The app writes only under DATA_DIR (export files; the embedded database without DATABASE_URL):
# a folder the unprivileged user owns, kept in a volume (several processes share it, or use S3).
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8000
# Run node directly (not through npm) so that SIGTERM reaches the server for a graceful stop.
CMD ["node", "dist/src/main.js"]
