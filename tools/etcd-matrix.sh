#!/bin/sh
# The backend matrix's second pass (make test): the end-to-end tests of the
# HTTP API, the server and the plugins once more, on an etcd backend. One
# etcd member runs for the pass; every test server gets its own prefix in it
# (runtime/server/servertest, SVC_TEST_ETCD). docs/deployment.md.
set -eu
GO=${GO:-go}
ETCD=${ETCD:-bin/etcd}
[ -x "$ETCD" ] || { echo "etcd-matrix: $ETCD missing (make etcd)"; exit 1; }
dir=$(mktemp -d)
"$GO" build -o "$dir/freeport" ./tools/freeport
cport=$("$dir/freeport"); pport=$("$dir/freeport")

"$ETCD" --name matrix --data-dir "$dir/data" \
  --listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
  --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
  --initial-cluster "matrix=http://127.0.0.1:$pport" --unsafe-no-fsync --log-level error >"$dir/etcd.log" 2>&1 &
pid=$!
cleanup() { kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"; }
trap 'cleanup; exit 1' INT TERM
if ! "$dir/freeport" -wait "http://127.0.0.1:$cport/health" -body true -timeout 20s; then
  echo "etcd-matrix: etcd did not start:"; cat "$dir/etcd.log"; cleanup; exit 1
fi
set +e
SVC_TEST_ETCD="http://127.0.0.1:$cport" "$GO" test -count=1 -timeout 20m \
  ./example-plugin/cmd/example-server/ ./runtime/server/... ./runtime/access/ ./runtime/content/ ./runtime/plugin/
rc=$?
cleanup
exit $rc
