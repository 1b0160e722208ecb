#!/bin/sh
# The registration job: writes the whole fleet's inventory, each device at the stable DNS name of the
# pod that serves it, and registers it with a RESTCONF controller in batches (fleetsim's own
# registration, --register-only, shard by shard: no device is served from here).
#   fleetsim-register-inventory FLEETSIM-ARGS...   (the StatefulSet's arguments, without --shard)
# Environment:
#   FLEETSIM_SHARDS         shards (the StatefulSet's replicas)
#   FLEETSIM_STATEFULSET    its name and its headless Service's (default fleetsim)
#   POD_NAMESPACE           their namespace (default default); FLEETSIM_CLUSTER_DOMAIN (cluster.local)
#   FLEETSIM_INVENTORY_DIR  where the files go (default ./inventory): shard-I.odl-json and shard-I.csv
#                           (shard I's devices at fleetsim-I.fleetsim.NS.svc), fleet.json and fleet.csv (all)
#   FLEETSIM_CONTROLLER     http://HOST:PORT of the controller; unset: write the files only
#   FLEETSIM_CONTROLLER_USERNAME/_PASSWORD (admin/admin), FLEETSIM_BATCH_SIZE (500 devices a request),
#   FLEETSIM_REGISTER_TIMEOUT (600: seconds each shard's registration may take, retries included)
# FLEETSIM_STRESS_BIN: fleetsim-stress (default: on PATH), which joins the shards' inventories.
set -eu
: "${FLEETSIM_STRESS_BIN:=fleetsim-stress}"
# shellcheck source=deploy/container/shard.sh
. "${FLEETSIM_LIB:-/usr/local/lib/fleetsim}/shard.sh"

require_shard_option
n=$(shard_count)
sts=${FLEETSIM_STATEFULSET:-fleetsim}
ns=${POD_NAMESPACE:-default}
domain=${FLEETSIM_CLUSTER_DOMAIN:-cluster.local}
out=${FLEETSIM_INVENTORY_DIR:-inventory}
batch=${FLEETSIM_BATCH_SIZE:-500}
is_count "$batch" && [ "$batch" -ge 1 ] || die "FLEETSIM_BATCH_SIZE must be a whole number >= 1, not \"$batch\""
timeout=${FLEETSIM_REGISTER_TIMEOUT:-600}
is_count "$timeout" || die "FLEETSIM_REGISTER_TIMEOUT must be a whole number of seconds, not \"$timeout\""
# The inventories hold the devices' passwords: readable by their owner only, as fleetsim writes them.
umask 077
case $out in *[[:space:]]*) die "FLEETSIM_INVENTORY_DIR must not hold spaces: \"$out\"" ;; esac
mkdir -p "$out"

# Each shard's part, its devices at its pod's name (in OpenDaylight's format and as CSV); then the parts
# joined in shard order as one inventory of each kind.
json_parts=""
csv_parts=""
i=0
while [ "$i" -lt "$n" ]; do
    for format in odl-json csv; do
        "$FLEETSIM_BIN" --shard "$i/$n" "$@" --generate-config-address "$sts-$i.$sts.$ns.svc.$domain" \
            --emit-inventory "$out/shard-$i.$format" --inventory-format "$format"
    done
    json_parts="$json_parts $out/shard-$i.odl-json"
    csv_parts="$csv_parts $out/shard-$i.csv"
    i=$((i + 1))
done
# shellcheck disable=SC2086 # the part names hold no spaces (FLEETSIM_INVENTORY_DIR's are refused above)
"$FLEETSIM_STRESS_BIN" merge $json_parts -o "$out/fleet.json" >/dev/null
# shellcheck disable=SC2086
"$FLEETSIM_STRESS_BIN" merge $csv_parts -o "$out/fleet.csv" >/dev/null

# Every device of the fleet in exactly one shard: the fleet-wide indices 0 .. N-1, each once, in order,
# and every node-id once.
if ! tail -n +2 "$out/fleet.csv" | cut -d, -f1 | awk '$1 != NR - 1 { exit 1 }'; then
    echo "fleetsim-register-inventory: the shards' devices are not the fleet's 0 .. N-1, each once" >&2
    exit 1
fi
shared=$(tail -n +2 "$out/fleet.csv" | cut -d, -f2 | sort | uniq -d | head -3 | tr '\n' ' ')
if [ -n "$shared" ]; then
    echo "fleetsim-register-inventory: two devices share a node-id: $shared" >&2
    exit 1
fi
total=$(jq '.["network-topology:topology"][0].node | length' "$out/fleet.json")
echo "fleetsim-register-inventory: $total devices in $n shards written to $out"

[ -n "${FLEETSIM_CONTROLLER:-}" ] || exit 0
# http://HOST:PORT, http://[V6]:PORT or without a port (8181, RESTCONF's usual).
hostport=${FLEETSIM_CONTROLLER#*://}
hostport=${hostport%%/*}
case $hostport in
\[*\]:*) host=${hostport%\]:*} host=${host#\[} port=${hostport##*\]:} ;;
\[*\]) host=${hostport#\[} host=${host%\]} port=8181 ;;
*:*) host=${hostport%:*} port=${hostport##*:} ;;
*) host=$hostport port=8181 ;;
esac
is_count "$port" || die "FLEETSIM_CONTROLLER must be http://HOST[:PORT], not \"$FLEETSIM_CONTROLLER\""
failed=0
i=0
while [ "$i" -lt "$n" ]; do
    "$FLEETSIM_BIN" --shard "$i/$n" "$@" --generate-config-address "$sts-$i.$sts.$ns.svc.$domain" \
        --controller-ip "$host" --controller-port "$port" \
        --controller-auth-username "${FLEETSIM_CONTROLLER_USERNAME:-admin}" \
        --controller-auth-password "${FLEETSIM_CONTROLLER_PASSWORD:-admin}" \
        --generate-configs-batch-size "$batch" --time-out "$timeout" --register-only || failed=$((failed + 1))
    i=$((i + 1))
done
echo "fleetsim-register-inventory: $total devices of $n shards registered with $FLEETSIM_CONTROLLER in batches of $batch, $failed shards not wholly registered"
[ "$failed" -eq 0 ]
