#!/bin/sh
# soak.sh builds the example server and the load tool, starts the server on
# a new data directory, preloads it and runs the load tool's mixed scenario
# (every operation at once, at a stated rate) for $SOAK, sampling the
# server's memory and descriptors; then it stops the server and removes
# the directory. It fails when the load tool reports any error.
#
#   SVC_ADMIN_PASSWORD=pw SOAK=10m sh tools/soak.sh     (or: make soak)
#
# The server runs under GODEBUG=gctrace=1, its output in the data
# directory's parent, so the load tool can read the live heap after each
# collection. Set SOAK_KEEP=1 to keep that directory (and the server log).
set -eu

GO=${GO:-go}
SOAK=${SOAK:-10m}
SOAK_RATE=${SOAK_RATE:-500}
SOAK_OBJECTS=${SOAK_OBJECTS:-10000}
SOAK_WATCHERS=${SOAK_WATCHERS:-20}
SOAK_CONCURRENCY=${SOAK_CONCURRENCY:-16}
SOAK_ADDR=${SOAK_ADDR:-127.0.0.1:18097}
SOAK_FLAGS=${SOAK_FLAGS:-}
: "${SVC_ADMIN_PASSWORD:?set SVC_ADMIN_PASSWORD: the soak server starts with it and the load tool signs in with it}"
export SVC_ADMIN_PASSWORD

cd "$(dirname "$0")/.."
mkdir -p bin
"$GO" build -o bin/example-server ./example-plugin/cmd/example-server
(cd tools/loadgen && GOWORK=off "$GO" build -o ../../bin/loadgen .) # a module of its own

work=$(mktemp -d "${TMPDIR:-/tmp}/svc-soak.XXXXXX")
server_pid=
stop_server() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid"
		wait "$server_pid" || echo "soak: the server exited with status $?" >&2
	fi
	server_pid=
}
cleanup() {
	stop_server
	if [ "${SOAK_KEEP:-}" = 1 ]; then
		echo "soak: kept $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

GODEBUG=gctrace=1 ./bin/example-server --addr "$SOAK_ADDR" --data-dir "$work/data" >"$work/server.log" 2>&1 &
server_pid=$!
echo "soak: server pid $server_pid on $SOAK_ADDR, data in $work/data; $SOAK at $SOAK_RATE requests/s over $SOAK_OBJECTS persons, $SOAK_WATCHERS watchers" >&2

status=0
# shellcheck disable=SC2086 # SOAK_FLAGS holds extra flags, split on purpose
./bin/loadgen --url "http://$SOAK_ADDR" --user admin --password "$SVC_ADMIN_PASSWORD" \
	--objects "$SOAK_OBJECTS" --scenarios mixed --duration "$SOAK" --rate "$SOAK_RATE" \
	--concurrency "$SOAK_CONCURRENCY" --watchers "$SOAK_WATCHERS" \
	--server-pid "$server_pid" --server-gctrace "$work/server.log" --strict $SOAK_FLAGS || status=$?
if ! kill -0 "$server_pid" 2>/dev/null; then
	echo "soak: the server died during the run; its last lines:" >&2
	tail -n 20 "$work/server.log" >&2
	status=1
fi
stop_server
exit "$status"
