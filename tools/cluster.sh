#!/usr/bin/env bash
# cluster.sh runs, on this machine, what a replicated deployment runs on
# several: a 3-member etcd cluster and three example-server replicas that
# share it (--etcd-endpoints), all on loopback. It builds bin/etcd and
# bin/example-server, starts the etcd members and waits until each is
# healthy, starts replica 1 and waits for its /readyz (it creates the first
# administrator in etcd), then replicas 2 and 3, prints their URLs and the
# etcd endpoints, and runs until Ctrl-C (or SIGTERM), when it stops the
# replicas, then the etcd members (SIGTERM to each one's process group,
# SIGKILL after 10 s). If a process it started exits by itself, it stops
# the rest and exits with status 1.
#
#   SVC_ADMIN_PASSWORD=pw make cluster       (or: bash tools/cluster.sh)
#
# SVC_ADMIN_PASSWORD is the password of user admin, created by the first
# replica when the store (etcd under the prefix) has no users yet
# (docs/operations.md); unset, the script makes up one and prints it.
#
# Settings (environment):
#   CLUSTER_DIR           etcd data and every log; kept, and reused by the
#                         next run (etcd restarts on its data). Unset: a new
#                         temporary directory, removed at exit unless
#                         CLUSTER_KEEP=1.
#   CLUSTER_HTTP_PORTS    the replicas' ports on 127.0.0.1 (8091 8092 8093)
#   CLUSTER_ETCD_PORTS    each etcd member's client:peer ports on 127.0.0.1
#                         (2379:2380 22379:22380 32379:32380)
#   CLUSTER_SERVER_FLAGS  more flags for every replica
#   CLUSTER_ETCD_FLAGS    more flags for every etcd member
#   CLUSTER_BUILD=0       run bin/etcd and bin/example-server as they are
#   GO                    the go command (go)
set -eu

GO=${GO:-go}
CLUSTER_HTTP_PORTS=${CLUSTER_HTTP_PORTS:-8091 8092 8093}
CLUSTER_ETCD_PORTS=${CLUSTER_ETCD_PORTS:-2379:2380 22379:22380 32379:32380}
CLUSTER_SERVER_FLAGS=${CLUSTER_SERVER_FLAGS:-}
CLUSTER_ETCD_FLAGS=${CLUSTER_ETCD_FLAGS:-}
WAIT_SECONDS=${CLUSTER_WAIT_SECONDS:-60}


cd "$(dirname "$0")/.."
root=$(pwd)
mkdir -p bin
if [ "${CLUSTER_BUILD:-1}" != 0 ]; then
	echo "cluster: building bin/etcd and bin/example-server" >&2
	(cd tools/etcd && "$GO" build -o ../../bin/etcd .)
	"$GO" build -o bin/example-server ./example-plugin/cmd/example-server
fi
# Health checks without curl (a fresh machine may have only Go).
"$GO" build -o bin/freeport ./tools/freeport

if [ -n "${CLUSTER_DIR:-}" ]; then
	mkdir -p "$CLUSTER_DIR"
	work=$(cd "$CLUSTER_DIR" && pwd)
	temporary=
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/svc-cluster.XXXXXX")
	temporary=1
fi

if [ -z "${SVC_ADMIN_PASSWORD:-}" ]; then
	SVC_ADMIN_PASSWORD=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	generated_password=1
else
	generated_password=
fi
export SVC_ADMIN_PASSWORD

# The processes started, and what they are, in start order.
pids=()
names=()

# spawn NAME LOG DIR COMMAND...: starts COMMAND in DIR, in a process group
# of its own (so a Ctrl-C at the terminal reaches this script only, and
# the script stops everything in order), output to LOG.
spawn() {
	local name=$1 log=$2 dir=$3
	shift 3
	set -m
	(cd "$dir" && exec "$@") >>"$log" 2>&1 </dev/null &
	local pid=$!
	set +m
	pids+=("$pid")
	names+=("$name")
	echo "cluster: started $name (pid $pid), log $log" >&2
}

# stop PID NAME: SIGTERM to the process group, SIGKILL after 10 s.
stop() {
	local pid=$1 name=$2 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "cluster: $name still running 10 s after SIGTERM; killing it" >&2
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	local status=$? i
	trap - EXIT INT TERM
	# Replicas first (started last), then the etcd members.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		stop "${pids[i]}" "${names[i]}"
	done
	if [ -n "$temporary" ] && [ "${CLUSTER_KEEP:-}" != 1 ]; then
		rm -rf "$work"
	else
		echo "cluster: kept $work" >&2
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fail MESSAGE LOG: says why, shows the end of LOG, and exits (cleanup
# stops the rest).
fail() {
	echo "cluster: $1; the end of $2:" >&2
	tail -n 20 "$2" >&2 || true
	exit 1
}

# await NAME PID LOG URL BODY: waits until URL answers 200 with BODY in it,
# while PID lives, for WAIT_SECONDS.
await() {
	local name=$1 pid=$2 log=$3 url=$4 body=$5 i
	for ((i = 0; i < WAIT_SECONDS * 5; i++)); do
		kill -0 "$pid" 2>/dev/null || fail "$name exited" "$log"
		if bin/freeport -wait "$url" -body "$body" -timeout 1s 2>/dev/null; then
			return 0
		fi
		sleep 0.2
	done
	fail "$name not ready at $url after ${WAIT_SECONDS}s" "$log"
}

# The etcd cluster.
read -r -a etcd_ports <<<"$CLUSTER_ETCD_PORTS"
[ "${#etcd_ports[@]}" -ge 1 ] || { echo "cluster: CLUSTER_ETCD_PORTS is empty" >&2; exit 1; }
initial=
endpoints=
for ((i = 0; i < ${#etcd_ports[@]}; i++)); do
	peer=${etcd_ports[i]#*:}
	initial="${initial:+$initial,}etcd$((i + 1))=http://127.0.0.1:$peer"
	endpoints="${endpoints:+$endpoints,}http://127.0.0.1:${etcd_ports[i]%%:*}"
done
etcd_pids=()
for ((i = 0; i < ${#etcd_ports[@]}; i++)); do
	n=$((i + 1))
	client=http://127.0.0.1:${etcd_ports[i]%%:*}
	peer=http://127.0.0.1:${etcd_ports[i]#*:}
	# History is compacted after an hour, as docs/deployment.md advises
	# (svc does not compact etcd itself).
	# shellcheck disable=SC2086 # CLUSTER_ETCD_FLAGS holds flags, split on purpose
	spawn "etcd$n" "$work/etcd$n.log" "$work" "$root/bin/etcd" \
		--name "etcd$n" --data-dir "$work/etcd$n.etcd" \
		--listen-client-urls "$client" --advertise-client-urls "$client" \
		--listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
		--initial-cluster "$initial" --initial-cluster-state new \
		--initial-cluster-token svc-cluster --log-level warn \
		--auto-compaction-mode periodic --auto-compaction-retention 1h $CLUSTER_ETCD_FLAGS
	etcd_pids+=("${pids[${#pids[@]} - 1]}")
done
for ((i = 0; i < ${#etcd_ports[@]}; i++)); do
	await "etcd$((i + 1))" "${etcd_pids[i]}" "$work/etcd$((i + 1)).log" \
		"http://127.0.0.1:${etcd_ports[i]%%:*}/health" '"health":"true"'
done
echo "cluster: etcd healthy at $endpoints" >&2

# The replicas: the first alone, so that it, and only it, creates the
# first administrator; then the others.
read -r -a http_ports <<<"$CLUSTER_HTTP_PORTS"
[ "${#http_ports[@]}" -ge 1 ] || { echo "cluster: CLUSTER_HTTP_PORTS is empty" >&2; exit 1; }
urls=()
replica_pids=()
start_replica() {
	local n=$(($1 + 1)) dir
	dir=$work/replica$n # its working directory: a replica shares nothing but etcd
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # CLUSTER_SERVER_FLAGS holds flags, split on purpose
	spawn "replica$n" "$work/replica$n.log" "$dir" "$root/bin/example-server" \
		--addr "127.0.0.1:${http_ports[$1]}" --etcd-endpoints "$endpoints" $CLUSTER_SERVER_FLAGS
	urls+=("http://127.0.0.1:${http_ports[$1]}")
	replica_pids+=("${pids[${#pids[@]} - 1]}")
}
await_replica() {
	await "replica$(($1 + 1))" "${replica_pids[$1]}" "$work/replica$(($1 + 1)).log" "${urls[$1]}/readyz" ""
}
start_replica 0
await_replica 0
for ((i = 1; i < ${#http_ports[@]}; i++)); do
	start_replica "$i"
done
for ((i = 1; i < ${#http_ports[@]}; i++)); do
	await_replica "$i"
done

echo
echo "cluster: ${#urls[@]} replicas of example-server sharing ${#etcd_ports[@]} etcd members"
for ((i = 0; i < ${#urls[@]}; i++)); do
	echo "  replica$((i + 1))  ${urls[i]}    log $work/replica$((i + 1)).log"
done
echo "  etcd       $endpoints"
if [ -n "$generated_password" ]; then
	echo "  admin      user admin, password $SVC_ADMIN_PASSWORD (made up for this run; if the store had an admin already, it keeps its password)"
else
	echo "  admin      user admin, password from SVC_ADMIN_PASSWORD (if the store had an admin already, it keeps its password)"
fi
echo "  data       $work"
echo "Ctrl-C stops everything."

# Until Ctrl-C, or until one of them exits by itself.
while :; do
	for ((i = 0; i < ${#pids[@]}; i++)); do
		if ! kill -0 "${pids[i]}" 2>/dev/null; then
			log=$work/${names[i]}.log
			fail "${names[i]} exited by itself" "$log"
		fi
	done
	sleep 1
done
