#!/bin/sh
# The image's entrypoint: runs fleetsim as shard I of N of one fleet, I from the pod (see shard.sh),
# N from FLEETSIM_SHARDS; the arguments are fleetsim's (the same for every shard).
#   FLEETSIM_SHARDS=4 fleetsim-entrypoint --fleet /etc/fleetsim/fleet.json
# FLEETSIM_METRICS (default 0.0.0.0:8080) is the HTTP server (/metrics, live page, control API) unless
# the arguments name --metrics. --help and --version are fleetsim's, unsharded.
set -eu
. "${FLEETSIM_LIB:-/usr/local/lib/fleetsim}/shard.sh"

case ${1:-} in
--help | -h | --version) exec "$FLEETSIM_BIN" "$@" ;;
esac

require_shard_option
n=$(shard_count)
i=$(shard_index "$n")

metrics=""
for arg in "$@"; do
    case $arg in --metrics | --metrics=*) metrics=given ;; esac
done
if [ -z "$metrics" ] && [ -n "${FLEETSIM_METRICS:-}" ]; then
    set -- --metrics "$FLEETSIM_METRICS" "$@"
fi
echo "fleetsim-container: shard $i of $n" >&2
exec "$FLEETSIM_BIN" --shard "$i/$n" "$@"
