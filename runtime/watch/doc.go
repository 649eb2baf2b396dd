// Package watch fans committed changes out to subscribers. Each subscriber
// has a bounded buffer; a subscriber that falls behind is dropped (its
// channel is closed and Err reports ErrSlow) so writers never wait on a
// reader.
//
// The store publishes to a Hub after each commit, in commit order, from its
// single committer goroutine; the HTTP layer turns subscriptions into
// WebSocket streams. The package is generic over the object type so that it
// does not depend on the store.
package watch
