# users-listing as a container: the single executable of `npm run build` on Debian 12 slim.
#
#   docker build -t users-listing .
#   docker run --rm -p 3000:3000 users-listing                  # the default dataset (built on first start)
#   docker run --rm -p 3000:3000 -v users-data:/var/lib/users-listing \
#     -e AWS_ENDPOINT_URL -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY -e AWS_REGION \
#     users-listing serve --source s3://bucket/prefix --poll 10 --host 0.0.0.0
#
# docs/operations.md, "Container", has more. Build arguments:
#   NPM_REGISTRY  an npm registry URL for `npm install` in the build stage (default: npm's own setting)

# --- build: Node.js 20 and npm are all the build needs (Bun is a pinned dev dependency) ---
FROM node:20-bookworm-slim AS build
WORKDIR /src
ARG NPM_REGISTRY=
# Dependencies first, so that a change to the sources reuses this layer.
# (`npm install`, not `npm ci`: see README, "Two commands".)
COPY package.json package-lock.json ./
RUN if [ -n "$NPM_REGISTRY" ]; then npm config set registry "$NPM_REGISTRY"; fi \
 && npm install --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
# Bundles and compresses the static assets, then `bun build --compile` into dist/users-listing.
RUN npm run build && ./dist/users-listing --version

# --- run: the binary needs only glibc (libc, libm, libpthread, libdl), which the slim image has ---
FROM debian:bookworm-slim
RUN groupadd --gid 10001 users-listing \
 && useradd --uid 10001 --gid users-listing --home-dir /var/lib/users-listing \
      --no-create-home --shell /usr/sbin/nologin users-listing \
 && mkdir -p /var/lib/users-listing \
 && chown users-listing:users-listing /var/lib/users-listing
COPY --from=build /src/dist/users-listing /usr/local/bin/users-listing

# The working directory (also the user's home) holds everything the server writes: the default
# dataset (data/users.snap), the private copy of the served snapshot (data/.snapshot-cache or
# --cache-dir) and a replica's downloads (.cache/users-listing/replica/<location>/downloads, or
# <--cache-dir>/downloads).
WORKDIR /var/lib/users-listing
VOLUME ["/var/lib/users-listing"]

# PORT and HOST are read by `serve` when --port / --host are not given (README, "Configuration");
# the health check below uses PORT, so change the port with -e PORT=N rather than --port.
ENV PORT=3000 \
    HOST=0.0.0.0
EXPOSE 3000
USER 10001:10001

# The image has no curl or wget; bash (in every Debian image) speaks enough HTTP over /dev/tcp.
# /readyz is 200 once a snapshot is served, 503 before (a replica waiting for its first
# download) and while draining on SIGTERM.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PORT:-3000} && printf 'GET /readyz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r -t 4 _ status _ <&3 && [ \"$status\" = 200 ]"]

# SIGTERM (docker stop) drains: /readyz turns 503, requests in flight finish, then it exits.
ENTRYPOINT ["/usr/local/bin/users-listing"]
CMD ["serve", "--host", "0.0.0.0"]
