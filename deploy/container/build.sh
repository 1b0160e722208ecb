#!/bin/sh
# Builds the fleetsim container image without any container registry: the Debian 12 base is made here
# with debootstrap from deb.debian.org and imported into podman's local store, then the Containerfile
# builds on it (BASE build argument).
#   deploy/container/build.sh [IMAGE]      default IMAGE: localhost/fleetsim:latest
# Environment: FLEETSIM_BASE (base image name, default localhost/debian12-minbase:bookworm),
# DEBIAN_MIRROR (default http://deb.debian.org/debian), REBUILD_BASE=1 to make the base again.
set -eu
cd "$(dirname "$0")/../.."

image=${1:-localhost/fleetsim:latest}
base=${FLEETSIM_BASE:-localhost/debian12-minbase:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
need=""
for tool in podman:podman buildah:buildah debootstrap:debootstrap; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || need="$need ${tool#*:}"
done
if [ -n "$need" ]; then
    echo "build: installing$need"
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $need
fi

start=$(date +%s)
if [ "${REBUILD_BASE:-0}" = 1 ] || ! podman image exists "$base"; then
    root=$(mktemp -d /var/tmp/fleetsim-base.XXXXXX)
    trap '$sudo rm -rf "$root"' EXIT
    echo "build: debootstrap bookworm (minbase) from $mirror"
    $sudo debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
        { tail -20 "$root.log"; echo "build: debootstrap failed (log: $root.log)" >&2; exit 1; }
    rm -f "$root.log"
    # The image's apt uses the same mirror and its security suite; no package lists are kept.
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s-security bookworm-security main\n' \
        "$mirror" "$mirror" "$mirror" | $sudo tee "$root/etc/apt/sources.list" >/dev/null
    $sudo rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
    $sudo tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
    echo "build: base $base imported ($(( $(date +%s) - start )) s)"
fi

# RUN steps need an OCI runtime that may start containers here; where it may not (no CAP_SYS_RESOURCE
# for the runtime's rlimits, cgroups v1/v2 hybrid), buildah's chroot isolation runs them without one.
isolation=""
if ! why=$(podman run --rm --pull=never --network none "$base" true 2>&1); then
    echo "build: containers cannot run here ($(echo "$why" | tail -1)); building with --isolation chroot"
    isolation="--isolation chroot"
fi
built=$(date +%s)
# shellcheck disable=SC2086
podman build --pull=never --format docker $isolation --build-arg BASE="$base" -f deploy/container/Containerfile -t "$image" .
end=$(date +%s)
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "build: $image: $((size / 1048576)) MiB; image build $((end - built)) s, total $((end - start)) s"
