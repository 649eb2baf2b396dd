#!/bin/bash
# Replicas on etcd, measured (docs/performance.md, "Replicas on etcd"):
# a 3-member etcd (fsync on), replicas A and B, an embedded server D, the
# load tool; creates through A, get and list on A vs D, replication lag
# A -> B. Needs make etcd loadgen and bin/example-server; uses ports
# 24370-24382 and 18091-18095.
set -u
cd "$(dirname "$0")/.."; ROOT=$(pwd); ETCD=$ROOT/bin/etcd; SRV=$ROOT/bin/example-server; LG=$ROOT/bin/loadgen
export SVC_ADMIN_PASSWORD=admin-pass-123
AUTH="-user admin -password admin-pass-123"
W=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$W"' EXIT INT TERM
cd "$W"
IC="m0=http://127.0.0.1:24380,m1=http://127.0.0.1:24381,m2=http://127.0.0.1:24382"
for i in 0 1 2; do $ETCD --name m$i --data-dir $W/m$i --listen-client-urls http://127.0.0.1:2437$i --advertise-client-urls http://127.0.0.1:2437$i --listen-peer-urls http://127.0.0.1:2438$i --initial-advertise-peer-urls http://127.0.0.1:2438$i --initial-cluster $IC --log-level error --quota-backend-bytes 8589934592 > $W/m$i.log 2>&1 & done
sleep 3
EPS=127.0.0.1:24370,127.0.0.1:24371,127.0.0.1:24372
waitready() { "$ROOT/bin/freeport" -wait $1/readyz -timeout 60s || echo "not ready: $1"; }
mkdir -p a b d; (cd a && exec $SRV --addr 127.0.0.1:18091 --etcd-endpoints $EPS > ../a.log 2>&1) & waitready http://127.0.0.1:18091
(cd b && exec $SRV --addr 127.0.0.1:18092 --etcd-endpoints $EPS > ../b.log 2>&1) & waitready http://127.0.0.1:18092
(cd d && exec $SRV --addr 127.0.0.1:18095 --data-dir $W/d/data > ../d.log 2>&1) & waitready http://127.0.0.1:18095
echo "== preload 20k on A (etcd) and D (disk)"
$LG -url http://127.0.0.1:18091 $AUTH -objects 20000 -scenarios get -duration 1s 2>&1 | grep -E "preload done"
$LG -url http://127.0.0.1:18095 $AUTH -objects 20000 -scenarios get -duration 1s 2>&1 | grep -E "preload done"
echo "== creates at 32 clients through replica A (3 runs)"
for r in 1 2 3; do $LG -url http://127.0.0.1:18091 $AUTH -objects 20000 -skip-preload -scenarios create -duration 10s 2>&1 | grep "^create"; done
echo "== get and list: replica A (etcd) vs D (embedded), alternating"
for r in 1 2 3; do
  echo "-- A"; $LG -url http://127.0.0.1:18091 $AUTH -objects 20000 -skip-preload -scenarios get,list -duration 8s 2>&1 | grep -E "^(get|list) "
  echo "-- D"; $LG -url http://127.0.0.1:18095 $AUTH -objects 20000 -skip-preload -scenarios get,list -duration 8s 2>&1 | grep -E "^(get|list) "
done
echo "== replication lag: writes on A at 500/s, 100 watchers on B (2 runs)"
for r in 1 2; do $LG -url http://127.0.0.1:18091 -watch-url http://127.0.0.1:18092 $AUTH -objects 20000 -skip-preload -scenarios watch -watch-rate 500 -watchers 100 -duration 10s 2>&1 | grep -E "^watch"; done
echo "== the same with one watcher on B (replication without the fan-out to 100 streams)"
for r in 1 2; do $LG -url http://127.0.0.1:18091 -watch-url http://127.0.0.1:18092 $AUTH -objects 20000 -skip-preload -scenarios watch -watch-rate 500 -watchers 1 -duration 10s 2>&1 | grep -E "^watch"; done
echo "== same on one embedded server (D) for comparison"
$LG -url http://127.0.0.1:18095 $AUTH -objects 20000 -skip-preload -scenarios watch -watch-rate 500 -watchers 100 -duration 10s 2>&1 | grep -E "^watch"
