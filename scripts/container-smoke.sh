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
previous_image=$(buildah images --quiet "$TAG" 2>/dev/null || true)
buildah bud "${build_options[@]}" .
# The previous build lost its tag: remove it rather than let untagged images pile up.
if [[ -n "$previous_image" && "$previous_image" != "$(buildah images --quiet "$TAG")" ]]; then
  buildah rmi "$previous_image" >/dev/null || true
fi
build_seconds=$((SECONDS - build_started))

echo "== run $TAG --demo"
smoke_started=$SECONDS
free_port() { node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })"; }
port=$(free_port)
container=$(buildah from "$TAG")
log=$(mktemp)
process_groups=()
cleanup() {
  # Each exporter was started under setsid, as its own process group: stop the group.
  for group in "${process_groups[@]}"; do
    kill -TERM -- "-$group" 2>/dev/null || true
    wait "$group" 2>/dev/null || true
  done
  buildah umount "$container" >/dev/null 2>&1 || true
  buildah rm "$container" >/dev/null
  rm -f "$log"
}
trap cleanup EXIT
setsid buildah run --isolation chroot --network host "$container" -- \
  trunk-exporter --demo --port "$port" >"$log" 2>&1 &
process_groups+=($!)

fetch() { node -e "fetch(process.argv[1]).then(async (r) => { process.stdout.write(await r.text()); process.exit(r.ok ? 0 : 1); }, () => process.exit(1))" "$1"; }
# Waits until $1/metrics has merge-queue samples (while process $2 runs); leaves the page in $metrics.
wait_for_metrics() {
  local deadline=$((SECONDS + 60))
  until metrics=$(fetch "$1/metrics") && grep -q '^trunk_merge_queue_state{' <<<"$metrics"; do
    if ! kill -0 "$2" 2>/dev/null; then echo "the exporter exited; log:"; cat "$log"; exit 1; fi
    if ((SECONDS > deadline)); then echo "no merge-queue metrics after 60s; log:"; cat "$log"; exit 1; fi
    sleep 1
  done
}
wait_for_metrics "http://127.0.0.1:$port" "${process_groups[0]}"
deadline=$((SECONDS + 60))
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

# buildah run cannot mount the root read-only, so run the image's filesystem the way a
# readOnlyRootFilesystem pod sees it: bind-mounted read-only in a private mount namespace, as uid
# 1000, without even a writable /tmp.
if [[ $(id -u) == 0 ]] && command -v unshare >/dev/null; then
  rootfs=$(buildah mount "$container")
  ro_port=$(free_port)
  setsid env -u NODE_EXTRA_CA_CERTS unshare --mount sh -c \
    'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec chroot --userspec=1000:1000 "$1" /usr/local/bin/trunk-exporter --demo --port "$2"' \
    sh "$rootfs" "$ro_port" >"$log" 2>&1 &
  process_groups+=($!)
  wait_for_metrics "http://127.0.0.1:$ro_port" "${process_groups[1]}"
  echo "read-only root filesystem: /metrics served"
else
  echo "read-only root filesystem: not checked (needs root and unshare)"
fi
smoke_seconds=$((SECONDS - smoke_started))

echo "== $TAG: $(buildah images --format '{{.Size}}' "$TAG" | head -1)"
echo "base ${base_seconds}s, build ${build_seconds}s, smoke ${smoke_seconds}s, total $((SECONDS - started))s"
