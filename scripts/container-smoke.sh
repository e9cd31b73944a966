#!/usr/bin/env bash
# Builds the container image with buildah, runs it with --demo, and checks what it serves: /metrics
# (with merge-queue data), /healthz, /readyz and the image's own HEALTHCHECK command. Prints the
# image size and how long each step took.
#
#   bash scripts/container-smoke.sh          # TAG=trunk-exporter:dev by default
#
# Needs buildah. Beside ../shared/tools/container-base.sh (this project's machines, which cannot
# pull images) it first builds the local stand-in for node:24-bookworm-slim with it.
set -euo pipefail
cd "$(dirname "$0")/.."
TAG=${TAG:-trunk-exporter:dev}
started=$SECONDS

echo "== base image"
if [[ -f ../shared/tools/container-base.sh ]]; then bash ../shared/tools/container-base.sh; fi
base_seconds=$((SECONDS - started))

echo "== build $TAG"
# docker format: the OCI format has no HEALTHCHECK.
build_options=(--isolation chroot --network host --format docker -t "$TAG")
# Behind a TLS-intercepting proxy npm in the build must trust the host's CA bundle; elsewhere the
# bundle only repeats the public CAs Node.js already trusts.
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
  build_options+=(--volume /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro
    --build-arg NODE_EXTRA_CA_CERTS=/run/host-ca.crt)
fi
build_started=$SECONDS
buildah bud "${build_options[@]}" .
build_seconds=$((SECONDS - build_started))

echo "== run $TAG --demo"
smoke_started=$SECONDS
port=$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")
container=$(buildah from "$TAG")
log=$(mktemp)
run_pid=
cleanup() {
  # setsid made the buildah run its own process group: stop it and the exporter inside it.
  if [[ -n "$run_pid" ]]; then kill -TERM -- "-$run_pid" 2>/dev/null || true; wait "$run_pid" 2>/dev/null || true; fi
  buildah rm "$container" >/dev/null
  rm -f "$log"
}
trap cleanup EXIT
setsid buildah run --isolation chroot --network host "$container" -- \
  trunk-exporter --demo --port "$port" >"$log" 2>&1 &
run_pid=$!

fetch() { node -e "fetch(process.argv[1]).then(async (r) => { process.stdout.write(await r.text()); process.exit(r.ok ? 0 : 1); }, () => process.exit(1))" "$1"; }
deadline=$((SECONDS + 60))
until metrics=$(fetch "http://127.0.0.1:$port/metrics") && grep -q '^trunk_merge_queue_state{' <<<"$metrics"; do
  if ((SECONDS > deadline)); then echo "no merge-queue metrics after 60s; container log:"; cat "$log"; exit 1; fi
  sleep 1
done
echo "/metrics: $(grep -c '^trunk_' <<<"$metrics") trunk_* samples, e.g."
grep -m3 '^trunk_merge_queue_state{' <<<"$metrics"
fetch "http://127.0.0.1:$port/healthz" >/dev/null && echo "/healthz: 200"
until fetch "http://127.0.0.1:$port/readyz" >/dev/null; do
  if ((SECONDS > deadline)); then echo "/readyz never answered 200"; exit 1; fi
  sleep 1
done
echo "/readyz: 200"

# The image's own HEALTHCHECK command, run inside the container: it must pass against the running
# exporter and fail against a port nobody listens on.
image_config() { buildah inspect --type image "$TAG" | node -e "let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => { const c = JSON.parse(s).Docker.config; process.stdout.write($1); })"; }
mapfile -d '' healthcheck < <(image_config "c.Healthcheck.Test.slice(1).join('\\0')")
[[ "${healthcheck[0]:-}" == node ]] || { echo "unexpected HEALTHCHECK: ${healthcheck[*]}"; exit 1; }
buildah run --isolation chroot --network host --env "TRUNK_EXPORTER_HEALTHCHECK_URL=http://127.0.0.1:$port/healthz" \
  "$container" -- "${healthcheck[@]}" && echo "HEALTHCHECK passes against the exporter"
if buildah run --isolation chroot --network host --env "TRUNK_EXPORTER_HEALTHCHECK_URL=http://127.0.0.1:1/healthz" \
  "$container" -- "${healthcheck[@]}" 2>/dev/null; then echo "HEALTHCHECK passed with nothing listening"; exit 1; fi
echo "HEALTHCHECK fails with nothing listening"
user=$(image_config "c.User")
[[ "$user" == 1000:1000 ]] || { echo "image user is '$user', expected 1000:1000"; exit 1; }
echo "user: $user"
smoke_seconds=$((SECONDS - smoke_started))

echo "== $TAG: $(buildah images --format '{{.Size}}' "$TAG" | head -1)"
echo "base ${base_seconds}s, build ${build_seconds}s, smoke ${smoke_seconds}s, total $((SECONDS - started))s"
