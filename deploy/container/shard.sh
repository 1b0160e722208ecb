# shellcheck shell=sh
# Shared by the image's entrypoint and its registration job (POSIX sh, sourced).
# FLEETSIM_BIN: the simulator (default: fleetsim on PATH).
: "${FLEETSIM_BIN:=fleetsim}"

die() {
    echo "fleetsim-container: $*" >&2
    exit 2
}

# Sharding is the binary's (--shard I/N): without it a pod would serve the whole fleet, not its part.
require_shard_option() {
    "$FLEETSIM_BIN" --help 2>/dev/null | grep -q -- --shard ||
        die "$FLEETSIM_BIN has no --shard option (fleetsim --help does not list it): this image needs a fleetsim that serves one shard of a fleet"
}

is_count() {
    case $1 in '' | *[!0-9]*) return 1 ;; esac
}

# The number of shards, FLEETSIM_SHARDS (default 1).
shard_count() {
    n=${FLEETSIM_SHARDS:-1}
    is_count "$n" && [ "$n" -ge 1 ] || die "FLEETSIM_SHARDS must be a whole number >= 1, not \"$n\""
    echo "$n"
}

# This pod's shard: FLEETSIM_SHARD_INDEX (the StatefulSet's pod-index label through the downward API),
# else the ordinal a StatefulSet puts at the end of the host name (fleetsim-3), else 0 for one shard.
shard_index() {
    n=$1
    i=${FLEETSIM_SHARD_INDEX:-}
    if [ -z "$i" ]; then
        host=${HOSTNAME:-$(hostname)} # set by container runtimes and Kubernetes
        case $host in
        *-*) i=${host##*-} ;;
        esac
        if ! is_count "$i"; then
            [ "$n" -eq 1 ] || die "no shard index: set FLEETSIM_SHARD_INDEX or run as a StatefulSet pod (host name NAME-ORDINAL, not \"$host\")"
            i=0
        fi
    fi
    is_count "$i" || die "FLEETSIM_SHARD_INDEX must be a whole number, not \"$i\""
    [ "$i" -lt "$n" ] || die "shard index $i is not below FLEETSIM_SHARDS=$n (scale the StatefulSet and FLEETSIM_SHARDS together)"
    echo "$i"
}
