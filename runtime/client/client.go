// Package client is the typed, in-process client of one model that
// controllers and custom APIs use: the same operations as the HTTP API
// (docs/api.md), on the store directly, with typed objects. Generated
// packages return a *Client[*Kind] per model.
package client

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/query"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/watch"
)

// Client reads and writes objects of one model. T is the model's pointer
// type (*Person), which must be what model.New returns.
type Client[T object.Object] struct {
	st *store.Store
	m  *model.Model
}

// New returns a client of m's objects in st.
func New[T object.Object](st *store.Store, m *model.Model) *Client[T] {
	return &Client[T]{st: st, m: m}
}

// Record returns the stored record of the named object. Records are never
// modified, so a reader that keeps decoded objects can tell by pointer
// whether the object changed since (see Decode).
func (c *Client[T]) Record(ctx context.Context, name string) (*store.Record, error) {
	return c.st.Get(ctx, c.m, name)
}

// Decode decodes a record of the client's model.
func (c *Client[T]) Decode(rec *store.Record) (T, error) { return c.decode(rec) }

// Model returns the client's model.
func (c *Client[T]) Model() *model.Model { return c.m }

// ListOptions select, sort and page a list (docs/api.md). Selector terms are
// in the URL syntax: "team=a", "!legacy", "spec.age=30". Size 0 means all.
type ListOptions struct {
	LabelSelector []string
	FieldSelector []string
	// Sort entries are "<index>[,asc|desc]".
	Sort []string
	Page int
	Size int
}

// Query converts the options to a store query, checking every term.
func (o ListOptions) Query() (query.Query, error) {
	v := url.Values{}
	v["labelSelector"] = o.LabelSelector
	v["fieldSelector"] = o.FieldSelector
	v["sort"] = o.Sort
	if o.Page != 0 {
		v.Set("page", strconv.Itoa(o.Page))
	}
	if o.Size != 0 {
		v.Set("size", strconv.Itoa(o.Size))
	}
	return query.Parse(v)
}

func (c *Client[T]) decode(rec *store.Record) (T, error) {
	var zero T
	obj, err := store.Decode(c.m, rec)
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("client: model %s decodes to %T, not %T", c.m.GVK(), obj, zero)
	}
	return t, nil
}

// Get returns the named object; a missing one is store.ErrNotFound.
func (c *Client[T]) Get(ctx context.Context, name string) (T, error) {
	rec, err := c.st.Get(ctx, c.m, name)
	if err != nil {
		var zero T
		return zero, err
	}
	return c.decode(rec)
}

// ListRecords is List without decoding: the stored records, for readers
// that need only names, versions and times.
func (c *Client[T]) ListRecords(ctx context.Context, opts ListOptions) (query.ListResult[*store.Record], error) {
	q, err := opts.Query()
	if err != nil {
		return query.ListResult[*store.Record]{}, err
	}
	return c.st.List(ctx, c.m, q)
}

// Count returns how many objects match opts' selectors (its sort and
// paging are ignored). Totals come from index counts, and no object is
// decoded (store.Count).
func (c *Client[T]) Count(ctx context.Context, opts ListOptions) (int64, error) {
	q, err := opts.Query()
	if err != nil {
		return 0, err
	}
	return c.st.Count(ctx, c.m, q)
}

// List returns one page of matching objects.
func (c *Client[T]) List(ctx context.Context, opts ListOptions) (query.ListResult[T], error) {
	q, err := opts.Query()
	if err != nil {
		return query.ListResult[T]{}, err
	}
	res, err := c.st.List(ctx, c.m, q)
	if err != nil {
		return query.ListResult[T]{}, err
	}
	items := make([]T, len(res.Items))
	for i, rec := range res.Items {
		if items[i], err = c.decode(rec); err != nil {
			return query.ListResult[T]{}, err
		}
	}
	return query.NewListResult(res.Page, res.Size, res.Total, items), nil
}

// Create stores a new object and returns it as stored. apiVersion and kind
// are filled in when empty.
func (c *Client[T]) Create(ctx context.Context, obj T) (T, error) {
	c.envelope(obj)
	rec, err := c.st.Create(ctx, c.m, obj)
	if err != nil {
		var zero T
		return zero, err
	}
	return c.decode(rec)
}

// Update replaces the object except its status, which keeps its stored
// value (see UpdateStatus); metadata.version must be the stored one.
func (c *Client[T]) Update(ctx context.Context, obj T) (T, error) {
	c.envelope(obj)
	return c.result(c.st.Update(ctx, c.m, obj))
}

// UpdateStatus replaces the object's status only: everything else keeps
// its stored value. metadata.version must be the stored one. It is the
// status subresource (PUT .../status) in process, and the one way a
// controller or custom handler writes status.
func (c *Client[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	c.envelope(obj)
	return c.result(c.st.UpdateStatus(ctx, c.m, obj))
}

// Patch applies a JSON Patch or merge patch to the named object, retrying
// on a concurrent write unless the patch pins metadata.version. The result
// is held to the same schema as an HTTP request body. As with Update, a
// change to status is ignored (see PatchStatus).
func (c *Client[T]) Patch(ctx context.Context, name string, pt codec.PatchType, patch []byte) (T, error) {
	return c.patch(ctx, name, pt, patch, c.st.Update)
}

// PatchStatus is Patch of the status only: of what the patched object
// differs in, only its status is stored.
func (c *Client[T]) PatchStatus(ctx context.Context, name string, pt codec.PatchType, patch []byte) (T, error) {
	return c.patch(ctx, name, pt, patch, c.st.UpdateStatus)
}

func (c *Client[T]) patch(ctx context.Context, name string, pt codec.PatchType, patch []byte,
	write func(context.Context, *model.Model, object.Object) (*store.Record, error)) (T, error) {
	var zero T
	apply, err := codec.ParsePatch(pt, patch)
	if err != nil {
		return zero, err
	}
	for attempt := 0; ; attempt++ {
		cur, err := c.st.Get(ctx, c.m, name)
		if err != nil {
			return zero, err
		}
		next, err := apply(cur.Data)
		if err != nil {
			return zero, err
		}
		obj, err := codec.Decode(c.m, next)
		if err != nil {
			return zero, err
		}
		if n := obj.GetEnvelope().Metadata.Name; n != name {
			return zero, &codec.Error{Detail: "the patch changes metadata.name", Fields: object.FieldErrors{{Field: "metadata.name", Message: fmt.Sprintf("must stay %q", name)}}}
		}
		pinned := obj.GetEnvelope().Metadata.GetVersion() != cur.Version
		rec, err := write(ctx, c.m, obj)
		if errors.Is(err, store.ErrConflict) && !pinned && attempt < 3 {
			continue
		}
		return c.result(rec, err)
	}
}

// result decodes a write's record, or passes its error on.
func (c *Client[T]) result(rec *store.Record, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return c.decode(rec)
}

// Delete marks the object deleted; it is removed once it has no
// finalizers. The returned object carries its deletionTimestamp.
func (c *Client[T]) Delete(ctx context.Context, name string) (T, error) {
	rec, err := c.st.Delete(ctx, c.m, name)
	if err != nil {
		var zero T
		return zero, err
	}
	return c.decode(rec)
}

func (c *Client[T]) envelope(obj T) {
	env := obj.GetEnvelope()
	if env.APIVersion == "" {
		env.APIVersion = c.m.APIVersion()
	}
	if env.Kind == "" {
		env.Kind = c.m.Kind
	}
}

// WatchOptions narrow a watch.
type WatchOptions struct {
	LabelSelector []string
	FieldSelector []string
	// Name watches one object.
	Name string
	// SendInitialEvents first delivers ADDED for every current match.
	SendInitialEvents bool
}

// Event is one typed change.
type Event[T any] struct {
	Type   watch.EventType
	Object T
}

// Watcher delivers typed events until its context ends or it is stopped.
type Watcher[T object.Object] struct {
	sub *store.Subscription
	c   *Client[T]
}

// Watch subscribes to changes of the model's objects.
func (c *Client[T]) Watch(ctx context.Context, opts WatchOptions) (*Watcher[T], error) {
	q, err := ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector}.Query()
	if err != nil {
		return nil, err
	}
	sub, err := c.st.Watch(ctx, c.m, store.WatchOptions{Query: q, Name: opts.Name, SendInitial: opts.SendInitialEvents})
	if err != nil {
		return nil, err
	}
	return &Watcher[T]{sub: sub, c: c}, nil
}

// Next blocks for the next event. It returns the subscription's error
// (watch.ErrSlow when the watcher fell behind, watch.ErrClosed at
// shutdown, ErrStopped after Stop) or the context's.
func (w *Watcher[T]) Next(ctx context.Context) (Event[T], error) {
	select {
	case ev, ok := <-w.sub.C:
		if !ok {
			err := w.sub.Err()
			if err == nil {
				err = ErrStopped
			}
			return Event[T]{}, err
		}
		obj, err := w.c.decode(ev.Object)
		if err != nil {
			return Event[T]{}, err
		}
		return Event[T]{Type: ev.Type, Object: obj}, nil
	case <-ctx.Done():
		return Event[T]{}, ctx.Err()
	}
}

// Stop ends the watch.
func (w *Watcher[T]) Stop() { w.sub.Close() }

// ErrStopped is returned by Next after Stop.
var ErrStopped = errors.New("client: watch stopped")
