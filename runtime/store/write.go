package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/runtime/jsonfast"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store/internal/index"
	"github.com/svcrun/svc/runtime/store/internal/record"
)

// Get returns the stored object named name. The record is shared: never
// modify it.
func (s *Store) Get(ctx context.Context, m *model.Model, name string) (*Record, error) {
	_, st, err := s.ready(m)
	if err != nil {
		return nil, err
	}
	if r, ok := st.byName.get(name); ok {
		return r, nil
	}
	return nil, &NotFoundError{Kind: m.GVK().String(), Name: name}
}

// Decode returns a fresh object of m decoded from rec, safe to modify.
func Decode(m *model.Model, rec *Record) (object.Object, error) {
	// The generated decoder reads what the store wrote, and leaves what
	// it is unsure of (escaped names, say) to encoding/json.
	if m.DecodeJSON != nil {
		if obj, ok := m.DecodeJSON(rec.Data); ok {
			return obj, nil
		}
	}
	obj := m.NewObject()
	if err := json.Unmarshal(rec.Data, obj); err != nil {
		return nil, fmt.Errorf("store: decode %s/%s: %w", m.Plural, rec.Name, err)
	}
	return obj, nil
}

// Create stores a new object. The server sets version 0 and the creation
// time and clears the deletion time; an empty name is generated from
// metadata.generateName. obj is modified to carry the stored metadata.
func (s *Store) Create(ctx context.Context, m *model.Model, obj object.Object) (*Record, error) {
	if err := checkObject(m, obj); err != nil {
		return nil, err
	}
	md := &obj.GetEnvelope().Metadata
	generate := md.Name == ""
	md.SetVersion(0)
	md.CreationTimestamp = object.Timestamp(s.opts.Now())
	md.DeletionTimestamp = nil
	md.NormalizeFinalizers()
	for attempt := 0; ; attempt++ {
		if generate {
			md.Name = md.GenerateName + randomSuffix()
		}
		// A durable name is refused here, without a trip through the
		// committer (which checks again for names in flight).
		var rec *Record
		var err error
		if _, gerr := s.Get(ctx, m, md.Name); gerr == nil {
			err = &AlreadyExistsError{Kind: m.GVK().String(), Name: md.Name}
		} else {
			if rec, err = s.encode(m, obj); err != nil {
				return nil, err
			}
			if err = s.checkKeys(m, rec, nil); err != nil {
				return nil, err
			}
			if s.shared != nil {
				err = s.commitShared(ctx, m, nil, rec, 0, false)
			} else {
				err = s.submit(ctx, s.createOp(m, rec))
			}
		}
		if generate && errors.Is(err, ErrAlreadyExists) && attempt < 8 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: create %s/%s: %w", m.Plural, md.Name, err)
		}
		return rec, nil
	}
}

// createOp adds rec unless its name or a unique key is taken. The log
// record is framed here, on the writer's goroutine, not the committer's.
func (s *Store) createOp(m *model.Model, rec *Record) *op {
	payload := frame(m, rec)
	return &op{apply: func(b *batch) error {
		t, _, err := s.ready(m)
		if err != nil {
			return err
		}
		if cur, _ := b.current(t, rec.Name); cur != nil {
			return &AlreadyExistsError{Kind: m.GVK().String(), Name: rec.Name}
		}
		if err := checkUnique(b, t, m, rec); err != nil {
			return err
		}
		b.put(t, nil, rec, payload)
		return nil
	}}
}

// Update writes the main resource: it replaces the object except its
// status, which keeps its stored value (a change to it is ignored; status
// is written with UpdateStatus), as Kubernetes does for a model with a
// status subresource. Every writer of an existing object goes through
// here or UpdateStatus, the HTTP API and the typed clients alike, so a
// rule granting <plural> but not <plural>/status cannot reach the status
// by any path.
//
// obj must carry the current metadata.version (optimistic lock); creation
// and deletion times keep their stored values. A write identical to what
// is stored changes nothing, not even the version. When the object is
// being deleted and the update leaves no finalizers, the object is removed
// for good. obj is modified to carry the stored metadata and status.
func (s *Store) Update(ctx context.Context, m *model.Model, obj object.Object) (*Record, error) {
	return s.update(ctx, m, obj, writeMain)
}

// UpdateStatus writes the status subresource: it replaces the stored
// object's status with obj's and keeps everything else as stored (spec,
// labels, annotations, finalizers). obj's metadata.version is the
// precondition, as for Update. obj itself is not modified.
func (s *Store) UpdateStatus(ctx context.Context, m *model.Model, obj object.Object) (*Record, error) {
	return s.update(ctx, m, obj, writeStatus)
}

// writeKind is the part of an object a write may change.
type writeKind int

const (
	writeMain   writeKind = iota // everything but status
	writeStatus                  // status only
)

func (s *Store) update(ctx context.Context, m *model.Model, obj object.Object, wk writeKind) (*Record, error) {
	md := &obj.GetEnvelope().Metadata
	kind := m.GVK().String()
	if wk == writeMain {
		// The status sent is ignored, and so are its faults.
		if err := withoutStatus(Validate(m, obj)).Err(); err != nil {
			return nil, err
		}
	}
	if md.Version == nil {
		return nil, CheckVersion(kind, md.Name, nil, 0)
	}
	want := *md.Version
	cur, err := s.Get(ctx, m, md.Name)
	if err != nil {
		return nil, err
	}
	if err := CheckVersion(kind, md.Name, md.Version, cur.Version); err != nil {
		return nil, err
	}
	if wk == writeStatus {
		if obj, err = statusWrite(m, cur, obj); err != nil {
			return nil, err
		}
		md = &obj.GetEnvelope().Metadata
		// The status is the only part the caller wrote, so it is what is
		// checked; the rest is as stored (and was checked when written).
		if err := checkObject(m, obj); err != nil {
			return nil, err
		}
	} else if err := keepStatus(m, cur, obj); err != nil {
		return nil, err
	}
	// The client can neither set nor clear server-managed fields; the
	// record's keys hold them exactly, so the stored JSON is not decoded.
	md.CreationTimestamp = timeOf(record.Creation(cur))
	md.DeletionTimestamp = timeOf(record.Deletion(cur))
	// generateName keeps its stored value too (as in Halo); only objects
	// created from one carry it, so only they are parsed for it.
	md.GenerateName = ""
	if bytes.Contains(cur.Data, []byte(`"generateName"`)) {
		var stored struct {
			Metadata struct {
				GenerateName string `json:"generateName"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(cur.Data, &stored); err != nil {
			return nil, fmt.Errorf("store: decode %s/%s: %w", m.Plural, md.Name, err)
		}
		md.GenerateName = stored.Metadata.GenerateName
	}
	md.NormalizeFinalizers()
	if cur.Deleting() {
		if err := checkNoNewFinalizers(m, cur, md.Finalizers); err != nil {
			return nil, err
		}
	}
	same, err := marshal(m, obj)
	if err != nil {
		return nil, fmt.Errorf("store: encode %s/%s: %w", m.Plural, md.Name, err)
	}
	if bytes.Equal(same, cur.Data) {
		return cur, nil
	}
	md.SetVersion(want + 1)
	rec, err := s.encodeNext(m, obj, same, want)
	if err != nil {
		return nil, err
	}
	if err := s.checkKeys(m, rec, cur); err != nil {
		return nil, err
	}
	if s.shared != nil {
		if err := s.commitShared(ctx, m, cur, rec, want, false); err != nil {
			return nil, fmt.Errorf("store: update %s/%s: %w", m.Plural, rec.Name, err)
		}
		return rec, nil
	}
	payload := frame(m, rec)
	err = s.submit(ctx, &op{apply: func(b *batch) error {
		t, _, err := s.ready(m)
		if err != nil {
			return err
		}
		old, err := currentOrNotFound(b, t, kind, rec.Name)
		if err != nil {
			return err
		}
		if old.Version != want || record.Creation(old) != record.Creation(rec) {
			return versionMismatch(kind, rec.Name, want, old.Version)
		}
		if rec.Deleting() && !record.Pending(rec) {
			b.remove(t, old, rec)
			return nil
		}
		if err := checkUnique(b, t, m, rec); err != nil {
			return err
		}
		b.put(t, old, rec, payload)
		return nil
	}})
	if err != nil {
		return nil, fmt.Errorf("store: update %s/%s: %w", m.Plural, rec.Name, err)
	}
	return rec, nil
}

// Delete marks an object deleted by setting its deletionTimestamp (once; a
// repeated delete changes nothing) and removes it for good when it has no
// finalizers. It returns the object as marked.
func (s *Store) Delete(ctx context.Context, m *model.Model, name string) (*Record, error) {
	for attempt := 0; ; attempt++ {
		cur, err := s.Get(ctx, m, name)
		if err != nil {
			return nil, err
		}
		if cur.Deleting() {
			return cur, nil
		}
		rec, err := s.markDeleted(m, cur)
		if err != nil {
			return nil, err
		}
		if s.shared != nil {
			err = s.commitShared(ctx, m, cur, rec, cur.Version, true)
			if errors.Is(err, errSharedRetry) && attempt < 16 {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("store: delete %s/%s: %w", m.Plural, name, err)
			}
			return rec, nil
		}
		payload := framePending(m, rec)
		err = s.submit(ctx, &op{apply: func(b *batch) error {
			t, _, err := s.ready(m)
			if err != nil {
				return err
			}
			old, err := currentOrNotFound(b, t, m.GVK().String(), name)
			if err != nil {
				return err
			}
			if old != cur {
				return errRetry
			}
			applyDelete(b, t, old, rec, payload)
			return nil
		}})
		if errors.Is(err, errRetry) && attempt < 16 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: delete %s/%s: %w", m.Plural, name, err)
		}
		return rec, nil
	}
}

// checkNoNewFinalizers refuses finalizers that cur, an object being
// deleted, does not already carry: deletion waits for the finalizers it
// started with to be removed, and one added now could hold the object
// forever. Removing finalizers stays allowed (it is how deletion ends).
// The committer checks that the stored version is still cur's, so cur's
// finalizers are the ones the update replaces.
func checkNoNewFinalizers(m *model.Model, cur *Record, next []string) error {
	if len(next) == 0 {
		return nil
	}
	var stored struct {
		Metadata struct {
			Finalizers []string `json:"finalizers"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(cur.Data, &stored); err != nil {
		return fmt.Errorf("store: decode %s/%s: %w", m.Plural, cur.Name, err)
	}
	var errs object.FieldErrors
	for _, f := range next {
		if !slices.Contains(stored.Metadata.Finalizers, f) {
			errs.Add("metadata.finalizers", "cannot add finalizer %q: the object is being deleted (metadata.deletionTimestamp is set); finalizers can only be removed", f)
		}
	}
	return errs.Err()
}

// statusWrite returns the stored object cur with obj's status and
// obj's metadata.version (the precondition): what a status write stores.
func statusWrite(m *model.Model, cur *Record, obj object.Object) (object.Object, error) {
	data, err := marshal(m, obj)
	if err != nil {
		return nil, fmt.Errorf("store: encode %s/%s: %w", m.Plural, cur.Name, err)
	}
	status, err := jsonfast.Member(data, "status")
	if err != nil {
		return nil, fmt.Errorf("store: status of %s/%s: %w", m.Plural, cur.Name, err)
	}
	next, err := Decode(m, cur)
	if err != nil {
		return nil, err
	}
	if err := setStatus(m, next, status); err != nil {
		return nil, fmt.Errorf("store: status of %s/%s: %w", m.Plural, cur.Name, err)
	}
	next.GetEnvelope().Metadata.Version = obj.GetEnvelope().Metadata.Version
	return next, nil
}

// keepStatus gives obj the status of the stored object cur.
func keepStatus(m *model.Model, cur *Record, obj object.Object) error {
	// The stored JSON is valid: find the member without decoding the rest.
	status, err := jsonfast.Member(cur.Data, "status")
	if err == nil {
		err = setStatus(m, obj, status)
	}
	if err != nil {
		return fmt.Errorf("store: keep the status of %s/%s: %w", m.Plural, cur.Name, err)
	}
	return nil
}

// setStatus replaces obj's status with raw, the JSON of a stored status
// (nil: none), through the model's generated setter when it is sure of
// raw.
func setStatus(m *model.Model, obj object.Object, raw []byte) error {
	if raw != nil && m.SetStatusJSON != nil && m.SetStatusJSON(obj, raw) {
		return nil
	}
	return object.SetStatus(obj, raw)
}

// withoutStatus drops the violations within status from errs.
func withoutStatus(errs object.FieldErrors) object.FieldErrors {
	var kept object.FieldErrors
	for _, e := range errs {
		if e.Field != "status" && !strings.HasPrefix(e.Field, "status.") && !strings.HasPrefix(e.Field, "status[") {
			kept = append(kept, e)
		}
	}
	return kept
}

// errRetry tells a writer that the object changed between its read and
// the commit; it reads again.
var errRetry = errors.New("object changed concurrently")

// applyDelete writes rec, old marked deleted: kept while finalizers are
// pending (payload frames it then), removed for good otherwise.
func applyDelete(b *batch, t *table, old, rec *Record, payload []byte) {
	if record.Pending(rec) {
		b.put(t, old, rec, payload)
	} else {
		b.remove(t, old, rec)
	}
}

// frame returns rec's log payload. Writers frame their records before
// submitting them, which keeps the copy out of the committer, the one
// serial stage of a write.
func frame(m *model.Model, rec *Record) []byte { return encodePut(m.StorageKey(), rec) }

// framePending frames a record marked deleted if it stays (finalizers
// pending); one removed for good is logged by name.
func framePending(m *model.Model, rec *Record) []byte {
	if !record.Pending(rec) {
		return nil
	}
	return frame(m, rec)
}

// markDeleted returns cur with a deletionTimestamp and the next version.
func (s *Store) markDeleted(m *model.Model, cur *Record) (*Record, error) {
	obj, err := Decode(m, cur)
	if err != nil {
		return nil, err
	}
	md := &obj.GetEnvelope().Metadata
	md.DeletionTimestamp = object.Timestamp(s.opts.Now())
	md.SetVersion(cur.Version + 1)
	return s.encode(m, obj)
}

// DeleteCollection marks every object matching q's selectors deleted, in
// one atomic write, and returns them as marked. Paging and sorting of q
// are ignored; objects already being deleted are left as they are.
func (s *Store) DeleteCollection(ctx context.Context, m *model.Model, q Query) ([]*Record, error) {
	q.Page, q.Size = 1, 0
	for attempt := 0; ; attempt++ {
		res, err := s.List(ctx, m, q)
		if err != nil {
			return nil, err
		}
		var olds, recs []*Record
		var payloads [][]byte
		for _, cur := range res.Items {
			if cur.Deleting() {
				continue
			}
			rec, err := s.markDeleted(m, cur)
			if err != nil {
				return nil, err
			}
			olds, recs = append(olds, cur), append(recs, rec)
			payloads = append(payloads, framePending(m, rec))
		}
		if len(recs) == 0 {
			return []*Record{}, nil
		}
		if s.shared != nil {
			return s.deleteCollectionShared(ctx, m, olds)
		}
		err = s.submit(ctx, &op{apply: func(b *batch) error {
			t, _, err := s.ready(m)
			if err != nil {
				return err
			}
			for i, rec := range recs {
				old, err := currentOrNotFound(b, t, m.GVK().String(), rec.Name)
				if err != nil || old != olds[i] {
					return errRetry
				}
			}
			for i, rec := range recs {
				applyDelete(b, t, olds[i], rec, payloads[i])
			}
			return nil
		}})
		if errors.Is(err, errRetry) && attempt < 16 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: delete collection %s: %w", m.Plural, err)
		}
		return recs, nil
	}
}

// currentOrNotFound is batch.current with a missing object as an error.
func currentOrNotFound(b *batch, t *table, kind, name string) (*Record, error) {
	rec, err := b.current(t, name)
	if err != nil {
		return nil, fmt.Errorf("store: read %s: %w", name, err)
	}
	if rec == nil {
		return nil, &NotFoundError{Kind: kind, Name: name}
	}
	return rec, nil
}

// timeOf turns a stored time key back into the timestamp (nil for none).
func timeOf(k model.Key) *time.Time {
	t, ok := model.KeyTime(k)
	if !ok {
		return nil
	}
	return &t
}

// CheckVersion is the optimistic lock of an update: a *ConflictError when
// the client sent no metadata.version or one other than stored, else nil.
func CheckVersion(kind, name string, sent *int64, stored int64) error {
	switch {
	case sent == nil:
		return &ConflictError{Kind: kind, Name: name, Reason: "metadata.version is required for an update"}
	case *sent != stored:
		return versionMismatch(kind, name, *sent, stored)
	}
	return nil
}

func versionMismatch(kind, name string, sent, stored int64) error {
	return &ConflictError{Kind: kind, Name: name,
		Reason: fmt.Sprintf("metadata.version %d does not match the stored version %d; read the object again and retry", sent, stored)}
}

// checkUnique fails when another object holds one of rec's keys on a
// unique index. memdb does not enforce uniqueness of secondary indexes.
func checkUnique(b *batch, t *table, m *model.Model, rec *Record) error {
	work := b.state(t).idx.Trees
	for i, ix := range m.Indexes {
		if !ix.Unique {
			continue
		}
		var buf [4]model.Key
		for _, k := range record.AppendKeys(rec, i, buf[:0]) {
			var holder string
			index.Exact(string(k)).Ascend(work[index.NumDefault+i], func(e index.Entry) bool {
				if e.Rec.Name != rec.Name {
					holder = e.Rec.Name
				}
				return holder == ""
			})
			if holder != "" {
				return &UniqueError{Kind: m.GVK().String(), Index: ix.Name, Value: model.FormatKey(ix.Type, k), Holder: holder}
			}
		}
	}
	return nil
}

// checkKeys refuses a record that puts more than Options.MaxIndexKeys
// keys into one index, naming the field. An update may keep as many as
// the stored version cur has (nil for a create), so that an object
// stored under a higher limit can still be changed, its keys reduced
// and its finalizers removed.
func (s *Store) checkKeys(m *model.Model, rec, cur *Record) error {
	limit := s.opts.MaxIndexKeys
	var errs object.FieldErrors
	over := func(field string, n, had int) {
		if n > limit && n > had {
			errs.Add(field, "has %d index keys; at most %d are allowed per object (store limit MaxIndexKeys)", n, limit)
		}
	}
	labels := 0
	if cur != nil {
		labels = record.NumLabels(cur)
	}
	over("metadata.labels", record.NumLabels(rec), labels)
	for i, ix := range m.Indexes {
		n := 0
		if cur != nil && i < record.NumIndexes(cur) {
			n = record.NumKeys(cur, i)
		}
		over(ix.Name, record.NumKeys(rec, i), n)
	}
	return errs.Err()
}

// checkObject is Validate as an error (*object.InvalidError).
func checkObject(m *model.Model, obj object.Object) error { return Validate(m, obj).Err() }

// Validate checks what the client controls, as a write does: apiVersion
// and kind (an empty one is filled in), metadata syntax and the model's
// field rules. It returns every violation (nil for none).
func Validate(m *model.Model, obj object.Object) object.FieldErrors {
	env := obj.GetEnvelope()
	var errs object.FieldErrors
	switch env.APIVersion {
	case "":
		env.APIVersion = m.APIVersion()
	case m.APIVersion():
	default:
		errs.Add("apiVersion", "must be %q for %s, not %q", m.APIVersion(), m.Plural, env.APIVersion)
	}
	switch env.Kind {
	case "":
		env.Kind = m.Kind
	case m.Kind:
	default:
		errs.Add("kind", "must be %q for %s, not %q", m.Kind, m.Plural, env.Kind)
	}
	object.ValidateMetadata(&env.Metadata, &errs)
	if m.Validate != nil {
		m.Validate(obj, &errs)
	}
	return errs
}

// encode serialises obj (with its final metadata) into a new record
// that owns exactly its JSON: the generated encoder writes into a pooled
// scratch buffer that the record copies (record.New).
func (s *Store) encode(m *model.Model, obj object.Object) (*Record, error) {
	if m.EncodeJSON == nil {
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("store: encode %s/%s: %w", m.Plural, obj.GetEnvelope().Metadata.Name, err)
		}
		return record.New(m, obj, data), nil
	}
	buf := scratch.Get().(*[]byte)
	data, err := m.EncodeJSON((*buf)[:0], obj)
	defer recycle(buf, data)
	if err != nil {
		return nil, fmt.Errorf("store: encode %s/%s: %w", m.Plural, obj.GetEnvelope().Metadata.Name, err)
	}
	return record.New(m, obj, data), nil
}

// scratch holds encoder buffers; one larger than maxScratch (a large
// object) is not kept.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxScratch = 64 << 10

// recycle puts buf back in scratch, keeping data's array (what was
// appended to buf, grown perhaps) unless it is larger than maxScratch or
// there is none (an encoder that failed may return nil).
func recycle(buf *[]byte, data []byte) {
	if cap(data) > 0 && cap(data) <= maxScratch {
		*buf = data[:0]
	}
	scratch.Put(buf)
}

// encodeNext is encode for an update: same is obj's JSON with version
// prev, obj now carries prev+1. The version is the one member that
// changed, so the bytes are spliced rather than encoded again when
// same holds it exactly once.
func (s *Store) encodeNext(m *model.Model, obj object.Object, same []byte, prev int64) (*Record, error) {
	old := strconv.AppendInt([]byte(`"version":`), prev, 10)
	if i := bytes.Index(same, old); i >= 0 && !bytes.Contains(same[i+len(old):], old[:10]) && !bytes.Contains(same[:i], old[:10]) {
		if j := i + len(old); j < len(same) && (same[j] == ',' || same[j] == '}') {
			buf := scratch.Get().(*[]byte)
			data := append((*buf)[:0], same[:i+10]...)
			data = strconv.AppendInt(data, prev+1, 10)
			data = append(data, same[j:]...)
			defer recycle(buf, data)
			return record.New(m, obj, data), nil
		}
	}
	return s.encode(m, obj)
}

// marshal is obj's JSON: m's generated encoder, or encoding/json.
func marshal(m *model.Model, obj object.Object) ([]byte, error) {
	if m.EncodeJSON != nil {
		return m.EncodeJSON(make([]byte, 0, 512), obj)
	}
	return json.Marshal(obj)
}

const suffixAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// randomSuffix returns 8 random lowercase alphanumerics for generateName.
func randomSuffix() string {
	var b [8]byte
	for i := range b {
		b[i] = suffixAlphabet[rand.IntN(len(suffixAlphabet))]
	}
	return string(b[:])
}
