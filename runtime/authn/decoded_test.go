package authn

import (
	"fmt"
	"testing"

	"github.com/svcrun/svc/runtime/store"
)

func TestDecodedCache(t *testing.T) {
	decodes := 0
	decode := func(r *store.Record) (string, error) { decodes++; return r.Name, nil }
	c := newDecodedCache[string](2)
	r1, r2 := &store.Record{Name: "v1"}, &store.Record{Name: "v2"}
	for range 3 {
		if got, _ := c.get("ann", r1, decode); got != "v1" {
			t.Fatalf("got %q", got)
		}
	}
	if decodes != 1 {
		t.Errorf("same record decoded %d times, want 1", decodes)
	}
	// A write makes a new record: decoded again, never the stale object.
	if got, _ := c.get("ann", r2, decode); got != "v2" || decodes != 2 {
		t.Errorf("after a change got %q with %d decodes, want v2 and 2", got, decodes)
	}
	for i := range 5 {
		c.get(fmt.Sprint(i), r1, decode)
	}
	if len(c.m) > 2 {
		t.Errorf("cache holds %d entries, bound is 2", len(c.m))
	}
	if _, err := c.get("bob", r1, func(*store.Record) (string, error) { return "", fmt.Errorf("bad") }); err == nil {
		t.Error("a decode error was swallowed")
	}
	if _, ok := c.m["bob"]; ok {
		t.Error("a failed decode was cached")
	}
}
