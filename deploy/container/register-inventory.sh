#!/bin/sh
# The registration job: writes the whole fleet's inventory, each device at the stable DNS name of the
# pod that serves it, and registers it with a RESTCONF controller in batches.
#   fleetsim-register-inventory FLEETSIM-ARGS...   (the StatefulSet's arguments, without --shard)
# Environment:
#   FLEETSIM_SHARDS         shards (the StatefulSet's replicas)
#   FLEETSIM_STATEFULSET    its name and its headless Service's (default fleetsim)
#   POD_NAMESPACE           their namespace (default default); FLEETSIM_CLUSTER_DOMAIN (cluster.local)
#   FLEETSIM_INVENTORY_DIR  where the files go (default ./inventory): fleet.csv (the unsharded fleet),
#                           shard-I.json (shard I's devices at fleetsim-I.fleetsim.NS.svc), fleet.json (all)
#   FLEETSIM_CONTROLLER     http://HOST:PORT of the controller; unset: write the files only
#   FLEETSIM_CONTROLLER_USERNAME/_PASSWORD (admin/admin), FLEETSIM_BATCH_SIZE (500 devices a request)
set -eu
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
# The inventories hold the devices' passwords: readable by their owner only, as fleetsim writes them.
umask 077
mkdir -p "$out"

# The unsharded fleet (the same options without --shard) is the reference every shard is checked against.
"$FLEETSIM_BIN" "$@" --emit-inventory "$out/fleet.csv" --inventory-format csv
i=0
while [ "$i" -lt "$n" ]; do
    "$FLEETSIM_BIN" --shard "$i/$n" "$@" --generate-config-address "$sts-$i.$sts.$ns.svc.$domain" \
        --emit-inventory "$out/shard-$i.json" --inventory-format odl-json
    i=$((i + 1))
done
# Shard order, then each shard's device order.
i=0
while [ "$i" -lt "$n" ]; do
    cat "$out/shard-$i.json"
    i=$((i + 1))
done | jq -s '{"network-topology:topology": [{"topology-id": "topology-netconf",
        "node": [.[]["network-topology:topology"][0].node[]]}]}' >"$out/fleet.json"

# Every device of the fleet in exactly one shard, and no other.
jq -r '.["network-topology:topology"][0].node[]["node-id"]' "$out/fleet.json" | sort >"$out/.sharded"
tail -n +2 "$out/fleet.csv" | cut -d, -f2 | sort >"$out/.whole"
if ! cmp -s "$out/.sharded" "$out/.whole"; then
    echo "fleetsim-register-inventory: the shards' devices are not the fleet's:" >&2
    diff "$out/.whole" "$out/.sharded" | head -20 >&2
    exit 1
fi
rm -f "$out/.sharded" "$out/.whole"
total=$(jq '.["network-topology:topology"][0].node | length' "$out/fleet.json")
echo "fleetsim-register-inventory: $total devices in $n shards written to $out"

[ -n "${FLEETSIM_CONTROLLER:-}" ] || exit 0
url="${FLEETSIM_CONTROLLER%/}/restconf/data/network-topology:network-topology/topology=topology-netconf"
user="${FLEETSIM_CONTROLLER_USERNAME:-admin}:${FLEETSIM_CONTROLLER_PASSWORD:-admin}"
start=0
failed=0
while [ "$start" -lt "$total" ]; do
    jq -c --argjson s "$start" --argjson b "$batch" \
        '.["network-topology:topology"][0].node |= .[$s:$s+$b]' "$out/fleet.json" >"$out/.batch"
    # As fleetsim's own registration: a merge PATCH; 5xx, 408, 429 and no answer are tried again.
    attempt=1
    while :; do
        code=$(curl -sS -o "$out/.answer" -w '%{http_code}' --connect-timeout 10 --max-time 120 \
            -u "$user" -X PATCH -H 'Content-Type: application/yang-data+json' \
            --data-binary "@$out/.batch" "$url" || echo 000)
        case $code in
        2??) break ;;
        000 | 5?? | 408 | 429) [ "$attempt" -lt 5 ] || break ;;
        *) break ;;
        esac
        sleep $((attempt * 2))
        attempt=$((attempt + 1))
    done
    case $code in
    2??) ;;
    *)
        failed=$((failed + 1))
        echo "fleetsim-register-inventory: devices $start-$((start + batch - 1)): HTTP $code: $(head -c 300 "$out/.answer" 2>/dev/null)" >&2
        ;;
    esac
    start=$((start + batch))
done
rm -f "$out/.batch" "$out/.answer"
echo "fleetsim-register-inventory: registered $total devices in batches of $batch with $FLEETSIM_CONTROLLER, $failed batches failed"
[ "$failed" -eq 0 ]
