package store_test

import "github.com/svcrun/svc/runtime/store"

// bigKeysOptions opens a store in dir whose objects may hold n keys per
// index.
func bigKeysOptions(dir string, n int) store.Options {
	return store.Options{Dir: dir, MaxIndexKeys: n}
}
