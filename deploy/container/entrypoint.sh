#!/bin/sh
# The image's entrypoint: runs fleetsim as shard I of N of one fleet; the arguments are fleetsim's,
# the same for every shard.
#   FLEETSIM_SHARDS=4 fleetsim-entrypoint --fleet /etc/fleetsim/fleet.json
#   fleetsim-entrypoint --shard '$(FLEETSIM_SHARD_INDEX)/$(FLEETSIM_SHARDS)' ...   (a StatefulSet's args)
# Without --shard, I comes from the pod (shard.sh) and N from FLEETSIM_SHARDS. A --shard whose index is
# empty (`/4`: the pod-index label Kubernetes sets from 1.28 on is missing) takes the pod's ordinal.
# FLEETSIM_METRICS (default 0.0.0.0:8080) is the HTTP server (/metrics, live page, control API) unless
# the arguments name --metrics. --help and --version are fleetsim's, unsharded.
set -eu
# shellcheck source=deploy/container/shard.sh
. "${FLEETSIM_LIB:-/usr/local/lib/fleetsim}/shard.sh"

case ${1:-} in
--help | -h | --version) exec "$FLEETSIM_BIN" "$@" ;;
esac

require_shard_option
shard=""
metrics=""
prev=""
for arg in "$@"; do
    case $prev in --shard) shard=$arg ;; esac
    case $arg in
    --shard=*) die "write --shard I/N as two arguments" ;;
    --metrics | --metrics=*) metrics=given ;;
    esac
    prev=$arg
done

if [ -z "$shard" ]; then
    n=$(shard_count)
    i=$(shard_index "$n")
    set -- --shard "$i/$n" "$@"
else
    n=${shard#*/}
    i=${shard%%/*}
    [ "$n" != "$shard" ] || die "--shard takes I/N, not \"$shard\""
    is_count "$n" && [ "$n" -ge 1 ] || die "--shard $shard: N must be a whole number >= 1"
    if [ -z "$i" ]; then
        i=$(FLEETSIM_SHARD_INDEX="" shard_index "$n")
        # the same arguments with the index filled in
        for arg in "$@"; do
            [ "$arg" = "$shard" ] && arg="$i/$n"
            set -- "$@" "$arg"
            shift
        done
    fi
fi
if [ -z "$metrics" ] && [ -n "${FLEETSIM_METRICS:-}" ]; then
    set -- --metrics "$FLEETSIM_METRICS" "$@"
fi
echo "fleetsim-container: shard $i of $n" >&2
exec "$FLEETSIM_BIN" "$@"
