#!/bin/sh
# Smoke test of the container image (docs/operations.md, "Container"): runs the image three ways
# with host networking and checks /readyz, GET /api/users and the image's own HEALTHCHECK command:
#   1. the default command (the default dataset, built into the volume on first start);
#   2. serve --source DIR, a host directory mounted read-only, published to while it runs;
#   3. serve --source s3://…, an s3rver (a dev dependency) on loopback, when node_modules has it.
# Needs a running docker daemon, the image (default users-listing; IMAGE=… to change) and, for
# publishing, dist/users-listing (npm run build). Ports 3311–3313 and one free port for s3rver.
#   sh scripts/docker-smoke.sh
set -eu
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-users-listing}
BIN=dist/users-listing
BUN=./node_modules/.bin/bun
WORK=$(mktemp -d)
S3PID=
cleanup() {
  for c in ul-smoke-default ul-smoke-dir ul-smoke-s3; do docker rm -f "$c" >/dev/null 2>&1 || true; done
  docker volume rm ul-smoke-data >/dev/null 2>&1 || true
  [ -n "$S3PID" ] && kill "$S3PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

# wait_ready PORT [GREP]: until /readyz is 200 (and its body matches GREP), at most 60 s
wait_ready() {
  i=0
  while [ $i -lt 120 ]; do
    body=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$1/readyz" || true)
    case "$body" in *" 200") echo "$body" | grep -q "${2:-.}" && { echo "  readyz: ${body% 200}"; return 0; } ;; esac
    sleep 0.5; i=$((i + 1))
  done
  fail "port $1 not ready: $body"
}

# healthcheck CONTAINER: runs the image's HEALTHCHECK command inside it, prints its exit code
healthcheck() {
  cmd=$(docker inspect --format '{{index .Config.Healthcheck.Test 3}}' "$1")
  if docker exec "$1" /bin/bash -c "$cmd"; then echo 0; else echo $?; fi
}

echo "image: $IMAGE, $(docker image inspect --format '{{.Size}}' "$IMAGE") bytes"

echo "1. default command (default dataset) on 3311"
docker run -d --name ul-smoke-default --network host -e PORT=3311 -v ul-smoke-data:/var/lib/users-listing "$IMAGE" >/dev/null
wait_ready 3311 '"rows":100000'
echo "  GET /api/users?pageSize=2: $(curl -sf 'http://127.0.0.1:3311/api/users?pageSize=2')"
[ "$(healthcheck ul-smoke-default)" = 0 ] || fail "HEALTHCHECK command failed while ready"
[ "$(docker exec ul-smoke-default id -u)" != 0 ] || fail "runs as root"
docker stop ul-smoke-default >/dev/null
[ "$(docker inspect --format '{{.State.ExitCode}}' ul-smoke-default)" = 0 ] || fail "docker stop: non-zero exit"
echo "  runs as uid $(docker run --rm --entrypoint id "$IMAGE" -u), docker stop exits 0"

echo "2. serve --source DIR (mounted read-only) on 3312"
mkdir -p "$WORK/loc"
docker run -d --name ul-smoke-dir --network host -e PORT=3312 -v "$WORK/loc:/mnt/source:ro" "$IMAGE" serve --source /mnt/source --poll 2 >/dev/null
sleep 2
code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:3312/readyz || true)
[ "$code" = 503 ] || fail "readyz before publish: $code, expected 503"
[ "$(healthcheck ul-smoke-dir)" != 0 ] || fail "HEALTHCHECK command passed while not ready"
echo "  before publish: readyz 503, HEALTHCHECK command fails"
"$BIN" snapshot generate --count 20000 --seed 7 -o "$WORK/a.snap" >/dev/null 2>&1
"$BIN" snapshot publish "$WORK/a.snap" --to "$WORK/loc" >/dev/null 2>&1
wait_ready 3312 '"rows":20000'
"$BIN" snapshot generate --count 30000 --seed 8 -o "$WORK/b.snap" >/dev/null 2>&1
"$BIN" snapshot publish "$WORK/b.snap" --to "$WORK/loc" >/dev/null 2>&1
wait_ready 3312 '"rows":30000'
echo "  GET /api/users?pageSize=2: $(curl -sf 'http://127.0.0.1:3312/api/users?pageSize=2')"

if [ -d node_modules/s3rver ]; then
  echo "3. serve --source s3://users-smoke/users (s3rver on loopback) on 3313"
  mkdir -p "$WORK/s3"
  S3DIR="$WORK/s3" "$BUN" -e '
    const dir = process.env.S3DIR;
    import S3rver from "s3rver";
    const s = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir, configureBuckets: [{ name: "users-smoke", configs: [] }] });
    const { port } = await s.run();
    await Bun.write(dir + "/port", String(port));
  ' &
  S3PID=$!
  i=0; while [ ! -s "$WORK/s3/port" ] && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
  [ -s "$WORK/s3/port" ] || fail "s3rver did not start"
  export AWS_ENDPOINT_URL="http://127.0.0.1:$(cat "$WORK/s3/port")" AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
  "$BIN" snapshot publish "$WORK/a.snap" --to s3://users-smoke/users >/dev/null 2>&1
  docker run -d --name ul-smoke-s3 --network host -e PORT=3313 \
    -e AWS_ENDPOINT_URL -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY -e AWS_REGION \
    "$IMAGE" serve --source s3://users-smoke/users --poll 2 >/dev/null
  wait_ready 3313 '"rows":20000'
  "$BIN" snapshot publish "$WORK/b.snap" --to s3://users-smoke/users >/dev/null 2>&1
  wait_ready 3313 '"rows":30000'
  echo "  GET /api/users?pageSize=2: $(curl -sf 'http://127.0.0.1:3313/api/users?pageSize=2')"
fi
echo "PASS"
