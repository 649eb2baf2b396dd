package example

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/controller"
	"github.com/svcrun/svc/runtime/jsonfast"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
)

// FriendControllerName names the friend counter in logs.
const FriendControllerName = "example-friend-counter"

// settleDelay is how soon a count that the memory of friend links does not
// confirm is taken again (see Reconcile).
const settleDelay = 200 * time.Millisecond

// beingDeleted is a field term every object being deleted matches: field
// terms exclude objects without a value, even for "!=".
const beingDeleted = "metadata.deletionTimestamp!=1970-01-01T00:00:00Z"

// NewFriendController returns the controller that keeps every Person's
// status.friendCount; the plugin hands it to the host to run. m is the
// Person model registered in st.
func NewFriendController(st *store.Store, m *model.Model, log *slog.Logger) *controller.Controller {
	fc := NewFriendCounter(NewPersonClient(st, m))
	// Each status write is a durable write; more workers share fsyncs
	// (group commit), so a burst of creates is caught up sooner.
	c := controller.New(controller.Options{Name: FriendControllerName, Store: st, Model: m, Reconciler: fc, Workers: 8, Logger: log})
	fc.SetEnqueue(c.Enqueue)
	return c
}

// FriendCounter is the reconciler that keeps status.friendCount of every
// Person equal to the number of Persons whose spec.friend names it. Persons
// being deleted (deletionTimestamp set, held by a finalizer) do not count.
//
// Counts come from the spec.friend index. The counter also remembers the
// friend each Person named when last reconciled, so that a changed or
// deleted link recounts its old target as well as its new one; every
// Person is reconciled once at start, which fills that memory.
type FriendCounter struct {
	persons *PersonClient
	enqueue func(name string)

	mu       sync.Mutex
	friendOf map[string]string // person → friend it named when last seen
	namedBy  map[string]int64  // friend → how many friendOf entries name it
}

// NewFriendCounter returns a counter working through persons. Call
// SetEnqueue before it reconciles; NewFriendController does.
func NewFriendCounter(persons *PersonClient) *FriendCounter {
	return &FriendCounter{persons: persons, friendOf: map[string]string{}, namedBy: map[string]int64{}}
}

// SetEnqueue gives the counter its controller's Enqueue, with which it
// queues the persons whose count a link change affects. Call it before
// the controller starts.
func (f *FriendCounter) SetEnqueue(enqueue func(name string)) { f.enqueue = enqueue }

// Reconcile looks at req's Person in both roles: as a friend-giver, it
// queues the old and new target of a changed link; as a target, it counts
// the Persons naming it and writes the count to its status.
//
// A count taken between two changes of one link can include a Person whose
// reconcile sees neither the link's old nor its new target (A: B→C→D
// while C is counted). So a count is only final when it agrees with the
// remembered links read after it; otherwise the links are still moving
// and the Person is counted again shortly.
func (f *FriendCounter) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	rec, err := f.persons.Record(ctx, req.Name)
	if errors.Is(err, store.ErrNotFound) {
		rec = nil
	} else if err != nil {
		return controller.Result{}, fmt.Errorf("friend counter: get person %s: %w", req.Name, err)
	}
	var p personLinks
	if rec != nil {
		if p, err = readLinks(rec.Data); err != nil {
			return controller.Result{}, fmt.Errorf("friend counter: decode person %s: %w", req.Name, err)
		}
	}
	alive := rec != nil && !p.deleting
	friend := ""
	if alive && p.friend != nil {
		friend = *p.friend
	}
	if old, changed := f.remember(req.Name, friend); changed && f.enqueue != nil {
		if old != "" {
			f.enqueue(old)
		}
		if friend != "" {
			f.enqueue(friend)
		}
	}
	if rec == nil {
		return controller.Result{}, nil // gone: nothing to write
	}
	// A Person being deleted no longer counts for its friend, but while a
	// finalizer holds it, it is still a Person and its own count is kept.

	n, err := countFriends(ctx, f.persons, req.Name, false)
	if err != nil {
		return controller.Result{}, err
	}
	seen := f.seen(req.Name)
	if n != seen {
		// Only now pay for finding persons being deleted among the counted.
		if n, err = countFriends(ctx, f.persons, req.Name, true); err != nil {
			return controller.Result{}, err
		}
		seen = f.seen(req.Name)
	}
	if p.count == nil || *p.count != n {
		// Only now decode the whole Person, from the same record: only the
		// status differs from the object as read, and its version is the
		// precondition, so a concurrent edit is a conflict, retried by the
		// controller, and never overwritten.
		full, err := f.persons.Decode(rec)
		if err != nil {
			return controller.Result{}, fmt.Errorf("friend counter: decode person %s: %w", req.Name, err)
		}
		var st PersonStatus
		if full.Status != nil {
			st = *full.Status
		}
		st.FriendCount = &n
		full.Status = &st
		if _, err := f.persons.UpdateStatus(ctx, full); err != nil {
			return controller.Result{}, fmt.Errorf("friend counter: update status of person %s: %w", req.Name, err)
		}
	}
	if n != seen {
		return controller.Result{RequeueAfter: settleDelay}, nil
	}
	return controller.Result{}, nil
}

// personLinks is what a reconcile reads of a Person. Most reconciles
// write nothing, so only these are read, not the whole Person.
type personLinks struct {
	deleting bool    // metadata.deletionTimestamp is set
	friend   *string // spec.friend
	count    *int64  // status.friendCount
}

// readLinks reads a stored Person's links in one pass of the tokenizer,
// decoding those three members and skipping the rest: less than half of
// what encoding/json took, which was 4% of a create's server CPU
// (BenchmarkReadLinks, docs/performance.md). What the fast reader is not
// sure of (an escaped name, a null) is left to encoding/json.
func readLinks(data []byte) (personLinks, error) {
	if l, ok := readLinksFast(data); ok {
		return l, nil
	}
	return readLinksJSON(data)
}

// readLinksFast is readLinks' one pass, or false where encoding/json must
// read the Person.
func readLinksFast(data []byte) (personLinks, bool) {
	var l personLinks
	d := jsonfast.NewDecoder(data)
	defer d.Release()
	if d.BeginObject() {
		for d.More() {
			name := d.Name()
			switch string(name) {
			case "metadata":
				member(d, "deletionTimestamp", func() {
					_ = d.String() // a null fails: encoding/json reads it as absent
					l.deleting = d.OK()
				})
			case "spec":
				member(d, "friend", func() {
					s := d.String()
					l.friend = &s
				})
			case "status":
				member(d, "friendCount", func() {
					n := d.Int(64)
					l.count = &n
				})
			default:
				skip(d, name, "metadata", "spec", "status")
			}
		}
	}
	return l, d.End()
}

// readLinksJSON is readLinks with encoding/json.
func readLinksJSON(data []byte) (personLinks, error) {
	var p struct {
		Metadata struct {
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
		Spec struct {
			Friend *string `json:"friend"`
		} `json:"spec"`
		Status *struct {
			FriendCount *int64 `json:"friendCount"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return personLinks{}, err
	}
	l := personLinks{deleting: p.Metadata.DeletionTimestamp != nil, friend: p.Spec.Friend}
	if p.Status != nil {
		l.count = p.Status.FriendCount
	}
	return l, nil
}

// member reads the object d is at: read reads the value of the member
// named want, and the others are skipped.
func member(d *jsonfast.Decoder, want string, read func()) {
	if !d.BeginObject() {
		return
	}
	for d.More() {
		if name := d.Name(); string(name) == want {
			read()
		} else {
			skip(d, name, want)
		}
	}
}

// skip skips the value of the member name, or fails d when name is one
// of wanted in another case: encoding/json matches names regardless of
// case, and the fallback must decide which member it takes.
func skip(d *jsonfast.Decoder, name []byte, wanted ...string) {
	for _, w := range wanted {
		if bytes.EqualFold(name, []byte(w)) {
			d.Fail()
			return
		}
	}
	d.Skip()
}

// countFriends returns how many Persons name name as their friend, less
// those being deleted when exact is set, from the spec.friend index's
// totals.
func countFriends(ctx context.Context, persons *PersonClient, name string, exact bool) (int64, error) {
	byFriend := PersonIndexSpecFriend + "=" + name
	n, err := persons.Count(ctx, client.ListOptions{FieldSelector: []string{byFriend}})
	if err != nil {
		return 0, fmt.Errorf("friend counter: count friends of %s: %w", name, err)
	}
	if !exact || n == 0 {
		return n, nil
	}
	deleted, err := persons.Count(ctx, client.ListOptions{FieldSelector: []string{byFriend, beingDeleted}})
	if err != nil {
		return 0, fmt.Errorf("friend counter: count deleted friends of %s: %w", name, err)
	}
	return n - deleted, nil
}

// AdmitFriendCount returns the Person model's admission hook: a Person the
// HTTP API creates is stored with its friend count already taken, so the
// counter's reconcile of the new Person finds nothing to write. Without
// it every create cost a second durable write (the count, usually 0) and
// a third event for every watcher. The count is owned by the counter: the
// API drops a status sent in the body before this hook runs. Updates are admitted as they are; the
// counter still reconciles every change, so a count that moves between
// admission and the create's commit is corrected as before.
func AdmitFriendCount(persons *PersonClient) func(ctx context.Context, old, obj object.Object) error {
	return func(ctx context.Context, old, obj object.Object) error {
		if old != nil {
			return nil
		}
		p, ok := obj.(*Person)
		if !ok {
			return fmt.Errorf("friend counter: admit: got %T, want *Person", obj)
		}
		var n int64
		if name := p.Metadata.Name; name != "" { // a generated name is new: 0, and the counter corrects it if not
			var err error
			if n, err = countFriends(ctx, persons, name, true); err != nil {
				return err
			}
		}
		st := PersonStatus{}
		if p.Status != nil {
			st = *p.Status
		}
		st.FriendCount = &n
		p.Status = &st
		return nil
	}
}

// remember records that person now names friend ("" for none) and returns
// the friend it named before, and whether that changed.
func (f *FriendCounter) remember(person, friend string) (old string, changed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old = f.friendOf[person]
	if old == friend {
		return old, false
	}
	if old != "" {
		if f.namedBy[old]--; f.namedBy[old] == 0 {
			delete(f.namedBy, old)
		}
	}
	if friend == "" {
		delete(f.friendOf, person)
	} else {
		f.friendOf[person] = friend
		f.namedBy[friend]++
	}
	return old, true
}

// seen returns how many remembered links name name.
func (f *FriendCounter) seen(name string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.namedBy[name]
}

var _ controller.Reconciler = (*FriendCounter)(nil)
