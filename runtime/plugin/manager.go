package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/api"
	"github.com/svcrun/svc/runtime/api/problem"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/watch"
)

// Phases of a plugin (status.phase of its Plugin object).
const (
	Pending  = "PENDING"
	Starting = "STARTING"
	Started  = "STARTED"
	Failed   = "FAILED"
	Stopping = "STOPPING"
	Stopped  = "STOPPED"
)

// Options configure a Manager.
type Options struct {
	Store    *store.Store
	Registry *model.Registry
	API      *api.Server
	// PluginModel is the core Plugin model, registered in Store.
	PluginModel *model.Model
	Brand       string
	Logger      *slog.Logger
	// Plugins are the plugins compiled in; nil means Registered().
	Plugins []Plugin
	// Auth tells plugins who is calling and what they may do.
	Auth Auth
	// Settle, if set, waits until access control decides with the roles
	// a plugin's extension files wrote or removed, so that a started
	// plugin's templates already apply.
	Settle func(ctx context.Context) error
}

// Manager runs the plugins of a server: it keeps one Plugin object per
// plugin and starts or stops each plugin as its spec.enabled says, at
// start-up and whenever the object changes (docs/plugins.md).
type Manager struct {
	opts   Options
	log    *slog.Logger
	byName map[string]*instance // filled by NewManager, read-only after
	wg     sync.WaitGroup       // the plugins' loops
}

// instance is one plugin's run-time state. Its transitions run on one
// goroutine (loop), so they never overlap.
type instance struct {
	mgr   *Manager
	p     Plugin
	kick  chan struct{}
	phase atomic.Pointer[string]
	// wanted is whether the plugin should run, as last read; readiness
	// waits only for wanted plugins.
	wanted atomic.Bool
	// failedSpec is the spec a start failed with; the same spec is not
	// tried again until it changes (or the server restarts).
	failedSpec string

	// Set while started (or starting):
	host      *Host
	models    []*model.Model
	routeKey  string
	open      atomic.Bool // custom routes answer (else 503)
	written   []*Document
	cancel    context.CancelFunc
	runnables sync.WaitGroup
}

// NewManager returns a manager; Run starts it.
func NewManager(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Brand == "" {
		opts.Brand = DefaultBrand
	}
	if opts.Plugins == nil {
		opts.Plugins = Registered()
	}
	m := &Manager{opts: opts, log: opts.Logger, byName: map[string]*instance{}}
	if opts.PluginModel != nil {
		opts.PluginModel.Admit = m.admit
	}
	for _, p := range opts.Plugins {
		in := &instance{mgr: m, p: p, kick: make(chan struct{}, 1)}
		ph := Pending
		in.phase.Store(&ph)
		in.wanted.Store(true)
		m.byName[p.Name()] = in
		// The generated package function has this shape; a plugin type
		// that copies it instead of implementing Documented would have
		// its document ignored without a word.
		if _, doc := p.(Documented); !doc {
			if _, near := p.(interface{ OpenAPI() []byte }); near {
				m.log.Warn("plugin has OpenAPI() []byte but plugin.Documented is OpenAPI(brand string) []byte; its document is not served", "plugin", p.Name())
			}
		}
	}
	return m
}

// NotReady names the plugins that should run and have not started
// (api.Options.NotReady).
func (m *Manager) NotReady() []string {
	var out []string
	for _, name := range m.names() {
		in := m.byName[name]
		if ph := *in.phase.Load(); in.wanted.Load() && ph != Started {
			out = append(out, fmt.Sprintf("plugin %s is %s", name, ph))
		}
	}
	return out
}

// Plugins returns the plugins the manager runs, sorted by name.
func (m *Manager) Plugins() []Plugin {
	out := make([]Plugin, 0, len(m.byName))
	for _, n := range m.names() {
		out = append(out, m.byName[n].p)
	}
	return out
}

// Phases returns each plugin's current phase (Pending, Started, ...),
// keyed by plugin name.
func (m *Manager) Phases() map[string]string {
	out := make(map[string]string, len(m.byName))
	for n, in := range m.byName {
		out[n] = *in.phase.Load()
	}
	return out
}

// Documents returns the OpenAPI documents of the started plugins that have
// one (Documented), keyed by plugin name.
func (m *Manager) Documents() map[string][]byte {
	out := map[string][]byte{}
	for _, n := range m.names() {
		in := m.byName[n]
		if d, ok := in.p.(Documented); ok && *in.phase.Load() == Started {
			out[n] = d.OpenAPI(m.opts.Brand)
		}
	}
	return out
}

func (m *Manager) names() []string {
	out := make([]string, 0, len(m.byName))
	for n := range m.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Run creates the missing Plugin objects (enabled), then follows them and
// starts and stops plugins until ctx ends. It returns when ctx ends and
// every plugin goroutine has finished; plugins are not stopped then (their
// runnables are), so a restart finds their objects as they were.
func (m *Manager) Run(ctx context.Context) error {
	for _, name := range m.names() {
		if err := m.ensureObject(ctx, name); err != nil {
			return err
		}
	}
	if err := m.markUnknown(ctx); err != nil {
		return err
	}
	for _, name := range m.names() {
		in := m.byName[name]
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			in.loop(ctx)
		}()
		in.poke()
	}
	err := m.follow(ctx)
	m.wg.Wait()
	return err
}

// follow pokes a plugin's loop on every change of its Plugin object.
func (m *Manager) follow(ctx context.Context) error {
	for {
		sub, err := m.opts.Store.Watch(ctx, m.opts.PluginModel, store.WatchOptions{SendInitial: true})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("plugin: watch plugins: %w", err)
		}
		if err := m.drain(ctx, sub); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		// Dropped for falling behind: subscribe again; the initial events
		// poke every plugin.
	}
}

func (m *Manager) drain(ctx context.Context, sub *store.Subscription) error {
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-sub.C:
			if !ok {
				if err := sub.Err(); err != nil && !errors.Is(err, watch.ErrSlow) && ctx.Err() == nil {
					return fmt.Errorf("plugin: watch plugins: %w", err)
				}
				return nil
			}
			if in, ok := m.byName[ev.Object.Name]; ok {
				in.poke()
			}
		}
	}
}

func (in *instance) poke() {
	select {
	case in.kick <- struct{}{}:
	default:
	}
}

func (in *instance) setPhase(ph string) { in.phase.Store(&ph) }

func (in *instance) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			in.halt()
			return
		case <-in.kick:
		}
		in.reconcile(ctx)
	}
}

// reconcile brings the plugin to the state its object asks for.
func (in *instance) reconcile(ctx context.Context) {
	m := in.mgr
	name := in.p.Name()
	obj, err := m.getObject(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		// Deleting the object stops the plugin; a restart creates it again.
		in.wanted.Store(false)
		if in.host != nil {
			in.stop(ctx, false)
		}
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			m.log.Error("plugin: read plugin object", "plugin", name, "err", err)
		}
		return
	}
	want := obj.enabled() && obj.Metadata.DeletionTimestamp == nil
	in.wanted.Store(want)
	running := in.host != nil
	switch {
	case want && !running:
		spec := string(obj.Spec)
		if in.failedSpec != "" && in.failedSpec == spec {
			return
		}
		in.failedSpec = ""
		if err := in.start(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			in.failedSpec = spec
			m.log.Error("plugin failed to start", "plugin", name, "err", err)
			in.setPhase(Failed)
			m.writeStatus(ctx, name, Failed, err.Error(), false)
			return
		}
		in.setPhase(Started)
		m.writeStatus(ctx, name, Started, "", true)
		m.log.Info("plugin started", "plugin", name)
	case !want && running:
		in.stop(ctx, true)
	case !want && !running && obj.phase() != Stopped:
		in.setPhase(Stopped)
		in.failedSpec = ""
		m.writeStatus(ctx, name, Stopped, "", false)
	case want && running && obj.phase() != Started:
		// Someone overwrote the status; put it right.
		m.writeStatus(ctx, name, Started, "", false)
	}
}

// start runs the plugin's Start step and applies its declarations in
// order: models (routes answer 503 while indexes build), custom routes,
// index builds, extension files, runnables. A failing step undoes the
// finished ones in reverse.
func (in *instance) start(ctx context.Context) (err error) {
	m := in.mgr
	name := in.p.Name()
	in.setPhase(Starting)
	m.writeStatus(ctx, name, Starting, "", false)
	h := &Host{name: name, brand: m.opts.Brand, log: m.log.With("plugin", name), st: m.opts.Store, fail: m.opts.API.Fail, auth: m.opts.Auth}
	in.host = h
	defer func() {
		if err != nil {
			// Take back what a failed start wrote, then its routes and models.
			in.halt()
			in.removeObjects(context.WithoutCancel(ctx))
			in.undo(context.WithoutCancel(ctx))
		}
	}()
	if err := checkGenerated(in.p); err != nil {
		return err
	}
	if err := startStep(ctx, in.p, h); err != nil {
		return err
	}
	if err := errors.Join(h.errs...); err != nil {
		return err
	}
	_, core := in.p.(Core)
	for _, d := range h.models {
		// The /api prefix is the service's (docs/api.md): a plugin model in the
		// empty group is refused. Groups under the brand are reserved too,
		// but Halo's own plugins live in core.halo.run, and serving them
		// there under --brand-domain halo.run is what lets Halo's clients
		// work: those are started, with a warning.
		if g := d.m.Group; !core && model.ReservedGroup(g, m.opts.Brand) {
			if g == "" {
				return fmt.Errorf("model %s: the empty group (/api) is reserved for the service; use a group the plugin owns", d.m.GVK())
			}
			h.log.Warn("model in a group reserved for the service", "model", d.m.GVK().String(), "group", g)
		}
		if err := m.opts.Registry.Register(d.m); err != nil {
			return fmt.Errorf("model %s: %w", d.m.GVK(), err)
		}
		in.models = append(in.models, d.m)
		if err := m.opts.Store.Reserve(ctx, d.m); err != nil {
			return fmt.Errorf("model %s: %w", d.m.GVK(), err)
		}
		m.opts.API.UseRoutes(d.m, d.routes)
	}
	in.routeKey = "plugin/" + name
	decls := h.routes
	if err := m.opts.API.Mount(in.routeKey, func(r gin.IRouter) {
		for _, d := range decls {
			for _, p := range d.prefixes {
				d.routes(r.Group(p, in.gate))
			}
		}
	}); err != nil {
		return err
	}
	for _, md := range in.models {
		start := time.Now()
		if err := m.opts.Store.Register(ctx, md); err != nil {
			return fmt.Errorf("build indexes of %s: %w", md.GVK(), err)
		}
		h.log.Info("model ready", "model", md.GVK().String(), "took", time.Since(start))
	}
	if err := in.loadExtensions(ctx); err != nil {
		return err
	}
	m.settle(ctx)
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	in.cancel = cancel
	for _, r := range h.runnables {
		in.runnables.Add(1)
		go func() {
			defer in.runnables.Done()
			defer func() {
				// A panicking controller must not take the server down.
				if v := recover(); v != nil {
					h.log.Error("runnable panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				}
			}()
			if err := r.Start(rctx); err != nil && rctx.Err() == nil {
				h.log.Error("runnable stopped", "err", err)
			}
		}()
	}
	in.open.Store(true)
	return nil
}

// startStep runs p.Start, turning a panic into an error so that a broken
// plugin fails alone.
func startStep(ctx context.Context, p Plugin, h *Host) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("start step panicked: %v", v)
		}
	}()
	if err := p.Start(ctx, h); err != nil {
		return fmt.Errorf("start step: %w", err)
	}
	return nil
}

// gate answers 503 on the plugin's custom routes until it has started.
func (in *instance) gate(c *gin.Context) {
	if !in.open.Load() {
		c.Header("Retry-After", "1")
		in.mgr.opts.API.Fail(c, problem.New(http.StatusServiceUnavailable, "plugin %s is not started", in.p.Name()))
		return
	}
	c.Next()
}

// stop undoes a started plugin. With removeObjects, its extension objects
// are deleted (except those marked do-not-overwrite), as when a plugin is
// disabled; at shutdown they stay.
func (in *instance) stop(ctx context.Context, removeObjects bool) {
	m := in.mgr
	name := in.p.Name()
	in.setPhase(Stopping)
	m.writeStatus(ctx, name, Stopping, "", false)
	in.halt()
	if s, ok := in.p.(Stopper); ok {
		if err := s.Stop(ctx); err != nil {
			m.log.Error("plugin stop step failed", "plugin", name, "err", err)
		}
	}
	if removeObjects {
		in.removeObjects(ctx)
		m.settle(ctx)
	}
	in.undo(ctx)
	in.setPhase(Stopped)
	m.writeStatus(ctx, name, Stopped, "", false)
	m.log.Info("plugin stopped", "plugin", name)
}

// halt stops the plugin's runnables and waits for them.
func (in *instance) halt() {
	in.open.Store(false)
	if in.cancel != nil {
		in.cancel()
		in.runnables.Wait()
		in.cancel = nil
	}
}

// undo removes the plugin's routes and models; their data stays.
func (in *instance) undo(ctx context.Context) {
	m := in.mgr
	in.halt()
	if in.routeKey != "" {
		m.opts.API.Unmount(in.routeKey)
		in.routeKey = ""
	}
	for i := len(in.models) - 1; i >= 0; i-- {
		md := in.models[i]
		m.opts.API.UseRoutes(md, nil)
		if err := m.opts.Store.Unregister(ctx, md); err != nil {
			m.log.Error("plugin: unregister model", "plugin", in.p.Name(), "model", md.GVK().String(), "err", err)
		}
		m.opts.Registry.Unregister(md)
	}
	in.models = nil
	if err := m.opts.API.Rebuild(); err != nil {
		m.log.Error("plugin: rebuild routes", "plugin", in.p.Name(), "err", err)
	}
	in.host = nil
	in.written = nil
}

func (m *Manager) settle(ctx context.Context) {
	if m.opts.Settle == nil {
		return
	}
	if err := m.opts.Settle(ctx); err != nil && ctx.Err() == nil {
		m.log.Warn("plugin: access control did not catch up", "err", err)
	}
}

// --- extension files -------------------------------------------------

func (in *instance) loadExtensions(ctx context.Context) error {
	ext, ok := in.p.(Extender)
	if !ok {
		return nil
	}
	m := in.mgr
	docs, err := LoadExtensions(ext.Extensions(), LoadOptions{
		Plugin: in.p.Name(),
		Brand:  m.opts.Brand,
		Lookup: m.opts.Registry.ByKind,
		Decode: func(md *model.Model, data []byte) error {
			obj, err := codec.DecodeNew(md, data)
			if err != nil {
				return err
			}
			return store.Validate(md, obj).Err()
		},
	})
	if err != nil {
		return fmt.Errorf("extension files: %w", err)
	}
	for _, d := range docs {
		if d.Skip != "" {
			m.log.Info("extension object skipped", "plugin", in.p.Name(), "object", d.String(), "reason", d.Skip)
			continue
		}
		wrote, err := m.writeDocument(ctx, d)
		if err != nil {
			return fmt.Errorf("extension files: %s: %w", d, err)
		}
		if wrote {
			in.written = append(in.written, d)
		}
	}
	m.warnUnknownAggregates(ctx, in.p.Name(), docs)
	return nil
}

// writeDocument creates d's object, or overwrites the stored one unless
// either carries <brand>/do-not-overwrite. It reports whether it wrote.
func (m *Manager) writeDocument(ctx context.Context, d *Document) (bool, error) {
	for attempt := 0; ; attempt++ {
		obj, err := codec.DecodeNew(d.Model, d.JSON)
		if err != nil {
			return false, err
		}
		cur, err := m.opts.Store.Get(ctx, d.Model, d.Name)
		if errors.Is(err, store.ErrNotFound) {
			_, err = m.opts.Store.Create(ctx, d.Model, obj)
			if errors.Is(err, store.ErrAlreadyExists) && attempt < 5 {
				continue
			}
			return err == nil, err
		}
		if err != nil {
			return false, err
		}
		if d.KeepExisting || recordLabel(cur, m.opts.Brand+"/do-not-overwrite") == "true" {
			return false, nil
		}
		md := &obj.GetEnvelope().Metadata
		md.SetVersion(cur.Version)
		_, err = m.opts.Store.Update(ctx, d.Model, obj)
		if errors.Is(err, store.ErrConflict) && attempt < 5 {
			continue
		}
		return err == nil, err
	}
}

// removeObjects deletes the extension objects the plugin wrote, except
// those marked do-not-overwrite since.
func (in *instance) removeObjects(ctx context.Context) {
	m := in.mgr
	for i := len(in.written) - 1; i >= 0; i-- {
		d := in.written[i]
		cur, err := m.opts.Store.Get(ctx, d.Model, d.Name)
		if err != nil {
			continue
		}
		if recordLabel(cur, m.opts.Brand+"/do-not-overwrite") == "true" {
			continue
		}
		if _, err := m.opts.Store.Delete(ctx, d.Model, d.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
			m.log.Error("plugin: delete extension object", "plugin", in.p.Name(), "object", d.String(), "err", err)
		}
	}
	in.written = nil
}

func recordLabel(rec *store.Record, key string) string {
	v, _ := rec.Get(key)
	return v
}

// --- the Plugin object -----------------------------------------------

// pluginObject is the manager's view of a stored Plugin.
type pluginObject struct {
	object.Envelope
	Spec   json.RawMessage `json:"spec"`
	Status *pluginStatus   `json:"status,omitempty"`
}

type pluginStatus struct {
	Phase         string     `json:"phase,omitempty"`
	Message       string     `json:"message,omitempty"`
	LastStartTime *time.Time `json:"lastStartTime,omitempty"`
}

func (o *pluginObject) enabled() bool {
	var s struct {
		Enabled *bool `json:"enabled"`
	}
	if json.Unmarshal(o.Spec, &s) != nil || s.Enabled == nil {
		return false
	}
	return *s.Enabled
}

func (o *pluginObject) phase() string {
	if o.Status == nil {
		return ""
	}
	return o.Status.Phase
}

func (m *Manager) getObject(ctx context.Context, name string) (*pluginObject, error) {
	rec, err := m.opts.Store.Get(ctx, m.opts.PluginModel, name)
	if err != nil {
		return nil, err
	}
	var o pluginObject
	if err := json.Unmarshal(rec.Data, &o); err != nil {
		return nil, fmt.Errorf("plugin: decode plugin %s: %w", name, err)
	}
	return &o, nil
}

// ensureObject creates a plugin's object, enabled, unless it exists.
func (m *Manager) ensureObject(ctx context.Context, name string) error {
	_, err := m.opts.Store.Get(ctx, m.opts.PluginModel, name)
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	doc := map[string]any{
		"apiVersion": m.opts.PluginModel.GVK().GroupVersion().String(),
		"kind":       m.opts.PluginModel.Kind,
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"enabled": true},
		"status":     map[string]any{"phase": Pending},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	obj, err := codec.Decode(m.opts.PluginModel, data)
	if err != nil {
		return fmt.Errorf("plugin: object for %s: %w", name, err)
	}
	if _, err := m.opts.Store.Create(ctx, m.opts.PluginModel, obj); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return fmt.Errorf("plugin: create object for %s: %w", name, err)
	}
	return nil
}

// statusPath is how the status subresource's route ends.
const statusPath = "/:name/status"

// admit keeps the HTTP API's clients to what a Plugin object is for: a
// plugin this binary includes (a create naming another is a 400 listing
// them), and its spec; the status is the server's alone. A client's status
// in a create, update or patch is replaced by the stored one (none on
// create), and the status subresource is refused.
func (m *Manager) admit(ctx context.Context, old, obj object.Object) error {
	p, ok := obj.(*core.Plugin)
	if !ok {
		return fmt.Errorf("plugin: admit %T, not a Plugin", obj)
	}
	name := p.Metadata.Name
	if c, ok := ctx.(*gin.Context); ok && strings.HasSuffix(c.FullPath(), statusPath) {
		return problem.New(http.StatusForbidden, "the status of plugin %s is written by the server only", name)
	}
	if old == nil {
		if _, known := m.byName[name]; !known {
			return problem.Invalid("this server does not include plugin "+strconv.Quote(name),
				object.FieldError{Field: "metadata.name", Message: "must name a plugin of this binary: " + m.known()})
		}
		p.Status = nil
		return nil
	}
	p.Status = old.(*core.Plugin).Status
	return nil
}

// known lists the plugins of this binary for a message.
func (m *Manager) known() string {
	if len(m.byName) == 0 {
		return "it includes none"
	}
	return strings.Join(m.names(), ", ")
}

// notInBinary is the status message of a Plugin object for a plugin this
// binary does not include (left by an earlier binary).
func notInBinary(name string) string {
	return "plugin " + name + " is not in this binary"
}

// markUnknown writes a FAILED status saying so on the Plugin objects of
// plugins this binary does not include, so that no stale STARTED stays.
func (m *Manager) markUnknown(ctx context.Context) error {
	res, err := m.opts.Store.List(ctx, m.opts.PluginModel, store.Query{Page: 1})
	if err != nil {
		return fmt.Errorf("plugin: list plugins: %w", err)
	}
	for _, rec := range res.Items {
		if _, ok := m.byName[rec.Name]; ok {
			continue
		}
		var o pluginObject
		if json.Unmarshal(rec.Data, &o) == nil && o.phase() == Failed && o.Status.Message == notInBinary(rec.Name) {
			continue
		}
		m.log.Warn("plugin object for a plugin this binary does not include", "plugin", rec.Name)
		m.writeStatus(ctx, rec.Name, Failed, notInBinary(rec.Name), false)
	}
	return nil
}

// writeStatus sets the status of a plugin's object, retrying on version
// conflicts (a user may be editing the spec meanwhile).
func (m *Manager) writeStatus(ctx context.Context, name, phase, message string, startedNow bool) {
	ctx = context.WithoutCancel(ctx)
	for attempt := 0; attempt < 10; attempt++ {
		rec, err := m.opts.Store.Get(ctx, m.opts.PluginModel, name)
		if err != nil {
			return // deleted: nothing to report on
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(rec.Data, &doc); err != nil {
			m.log.Error("plugin: decode plugin object", "plugin", name, "err", err)
			return
		}
		var st pluginStatus
		if raw, ok := doc["status"]; ok {
			_ = json.Unmarshal(raw, &st)
		}
		st.Phase, st.Message = phase, message
		if startedNow {
			now := time.Now().UTC()
			st.LastStartTime = &now
		}
		if doc["status"], err = json.Marshal(st); err != nil {
			return
		}
		data, err := json.Marshal(doc)
		if err != nil {
			return
		}
		obj, err := codec.Decode(m.opts.PluginModel, data)
		if err != nil {
			m.log.Error("plugin: status does not fit the Plugin model", "plugin", name, "err", err)
			return
		}
		_, err = m.opts.Store.UpdateStatus(ctx, m.opts.PluginModel, obj)
		if err == nil || !errors.Is(err, store.ErrConflict) {
			if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrClosed) {
				m.log.Error("plugin: write status", "plugin", name, "err", err)
			}
			return
		}
	}
}
