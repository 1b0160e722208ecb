#!/bin/sh
# The Kubernetes example's fleet (deploy/kubernetes/fleet.json: 200,000 devices) as SHARDS processes on
# this machine, each on a loopback address of its own as a pod would be (127.0.7.K, --shard-own-ports,
# NETCONF over TCP, no SNMP: a process here may open 20,000 files), then what the cluster does with
# it: the registration Job's script (one inventory, every device registered in batches with a stand-in
# controller answering 204), one merged report from every shard's GET /api/v1/report, and a device
# asked for by its fleet-wide index on the shard that serves it.
# Run: sh bench/shard_fleet.sh [SHARDS]   (default 20; from the repository, after the build)
set -eu
cd "$(dirname "$0")/.."
B=$PWD/build
N=${1:-20}
work=$(mktemp -d /tmp/fleetsim-shard-fleet.XXXXXX)
sed '/"ip": "0.0.0.0",/d' deploy/kubernetes/fleet.json >"$work/fleet.json" # each shard on --ip
"$B/bench_http_sink" 0 >"$work/sink.out" &
sink=$!
pids=""
trap 'kill $pids $sink 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
sleep 0.5
sink_port=$(awk '{print $2}' "$work/sink.out")
devices=$(grep -o '"device-count": [0-9]*' "$work/fleet.json" | awk '{s += $2} END {print s}')
start=$(date +%s.%N)
k=0
while [ "$k" -lt "$N" ]; do
    "$B/fleetsim" --fleet "$work/fleet.json" --seed 1 --shard-own-ports --shard "$k/$N" --ip "127.0.7.$((k + 1))" \
        --snmp false --ssh false --threads 1 --metrics "127.0.7.$((k + 1)):9100" >"$work/shard-$k.log" 2>&1 &
    pids="$pids $!"
    k=$((k + 1))
done
k=0
waited=0
while [ "$k" -lt "$N" ]; do
    until curl -sf "http://127.0.7.$((k + 1)):9100/api/v1/fleet" >/dev/null; do
        waited=$((waited + 1))
        if [ "$waited" -gt 600 ]; then # 60 s: a shard that exited (too many devices for its files) or hangs
            echo "shard $k is not up; its log:" >&2
            tail -n 3 "$work/shard-$k.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    k=$((k + 1))
done
echo "$N shards of $devices devices up in $(echo "$(date +%s.%N) - $start" | bc) s"
job_start=$(date +%s.%N)
FLEETSIM_BIN=$B/fleetsim FLEETSIM_STRESS_BIN=$B/fleetsim-stress FLEETSIM_LIB=$PWD/deploy/container FLEETSIM_SHARDS=$N \
    POD_NAMESPACE=sim FLEETSIM_INVENTORY_DIR=$work/inv FLEETSIM_CONTROLLER=http://127.0.0.1:$sink_port \
    FLEETSIM_BATCH_SIZE=500 sh deploy/container/register-inventory.sh --fleet "$work/fleet.json" --seed 1 \
    --shard-own-ports --ssh false --snmp false 2>&1 | grep "^fleetsim-register-inventory"
echo "registration job: $(echo "$(date +%s.%N) - $job_start" | bc) s; inventory rows: $(($(wc -l <"$work/inv/fleet.csv") - 1))"
parts=""
k=0
while [ "$k" -lt "$N" ]; do
    curl -sf "http://127.0.7.$((k + 1)):9100/api/v1/report" -o "$work/report-$k.json"
    parts="$parts $work/report-$k.json"
    k=$((k + 1))
done
# shellcheck disable=SC2086
"$B/fleetsim-stress" merge $parts -o "$work/fleet-report.json" | tail -n 1
/usr/bin/python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
idx = [x['device'] for x in d['devices']]
print('merged report: %d devices, indices 0..N-1 each once in order: %s' % (len(idx), idx == list(range(len(idx)))))
" "$work/fleet-report.json"
last=$((devices - 1))
shard=$((N - 1))
echo "device $last on shard $shard: $(curl -s "http://127.0.7.$((shard + 1)):9100/api/v1/devices/$last")"
