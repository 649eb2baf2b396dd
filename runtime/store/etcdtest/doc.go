// Package etcdtest runs real etcd clusters for tests: Start starts one of
// n members on free loopback ports, each member an etcd process of its
// own, so a test can stop (SIGTERM), kill (SIGKILL) and restart members
// and watch the cluster keep or lose its quorum.
//
// The members run the standard etcd binary (Binary): bin/etcd at the
// repository root (make etcd), or one built from tools/etcd the first time
// a test binary needs it, or the file SVC_ETCD_BIN names. This package
// imports no etcd code: etcd's server lives in the module tools/etcd so
// that it never enters the root module's graph, nor a plugin author's.
//
//	c := etcdtest.Start(t, 3)           // healthy when it returns
//	eps := c.Endpoints()               // http://127.0.0.1:port, one per member
//	c.Kill(c.Leader())                  // quorum kept: 2 of 3
//	c.Restart(0)                        // same data directory and ports
//
// Every member is stopped when the test ends (t.Cleanup); if the test
// failed, the last lines of each member's log are printed first. Members
// log to files in the test's temporary directory (LogPath) at level warn
// (LogLevel).
//
// Members run with --unsafe-no-fsync unless Fsync is given: a SIGKILLed
// process's writes are already in the kernel's page cache, so killing
// members loses nothing that fsync would have kept, and tests run several
// times faster on slow disks. Only a machine crash would tell the
// difference, and tests do not crash machines.
package etcdtest
