package model

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func newModel(group, version, kind, plural string) *Model {
	return &Model{Group: group, Version: version, Kind: kind, Plural: plural}
}

func TestRegistryRegister(t *testing.T) {
	type step struct {
		m       *Model
		wantErr string
	}
	post := newModel("content.svc.run", "v1alpha1", "Post", "posts")
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "one model", steps: []step{{m: post}}},
		{name: "same model twice", steps: []step{{m: post}, {m: post, wantErr: "model content.svc.run/v1alpha1/Post is already registered"}}},
		{name: "duplicate kind, other plural", steps: []step{
			{m: post},
			{m: newModel("content.svc.run", "v1alpha1", "Post", "articles"), wantErr: "is already registered"},
		}},
		{name: "duplicate plural, other kind", steps: []step{
			{m: post},
			{m: newModel("content.svc.run", "v1alpha1", "Article", "posts"), wantErr: "resource content.svc.run/v1alpha1/posts is already registered"},
		}},
		{name: "same kind in another version", steps: []step{{m: post}, {m: newModel("content.svc.run", "v1", "Post", "posts")}}},
		{name: "same kind in another group", steps: []step{{m: post}, {m: newModel("other.example.com", "v1alpha1", "Post", "posts")}}},
		{name: "same kind in the empty group", steps: []step{{m: post}, {m: newModel("", "v1alpha1", "Post", "posts")}}},
		{name: "invalid model", steps: []step{{m: newModel("g", "v1", "Thing", "Things"), wantErr: "must be lower case"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			for i, s := range tc.steps {
				err := r.Register(s.m)
				switch {
				case s.wantErr == "" && err != nil:
					t.Fatalf("step %d Register(%s, %s): got %v, want nil", i, s.m.GVK(), s.m.Plural, err)
				case s.wantErr != "" && err == nil:
					t.Fatalf("step %d Register(%s, %s): got nil, want error containing %q", i, s.m.GVK(), s.m.Plural, s.wantErr)
				case s.wantErr != "" && !strings.Contains(err.Error(), s.wantErr):
					t.Fatalf("step %d Register(%s, %s): got %q, want it to contain %q", i, s.m.GVK(), s.m.Plural, err, s.wantErr)
				}
			}
			// A failed Register leaves nothing behind: every model is
			// found under both names or under neither.
			for _, m := range r.Models() {
				if got, ok := r.ByResource(m.GVR()); !ok || got != m {
					t.Errorf("ByResource(%s): got %v, %v; want the model registered as %s", m.GVR(), got, ok, m.GVK())
				}
			}
		})
	}
}

func TestRegistryLookupAndUnregister(t *testing.T) {
	r := NewRegistry()
	post := newModel("content.svc.run", "v1alpha1", "Post", "posts")
	role := newModel("", "v1alpha1", "Role", "roles")
	for _, m := range []*Model{post, role} {
		if err := r.Register(m); err != nil {
			t.Fatalf("Register(%s): %v", m.GVK(), err)
		}
	}
	lookups := []struct {
		name string
		gvk  GroupVersionKind
		gvr  GroupVersionResource
		want *Model
	}{
		{name: "post", gvk: post.GVK(), gvr: post.GVR(), want: post},
		{name: "role in empty group", gvk: GroupVersionKind{"", "v1alpha1", "Role"}, gvr: GroupVersionResource{"", "v1alpha1", "roles"}, want: role},
		{name: "wrong version", gvk: GroupVersionKind{"content.svc.run", "v1", "Post"}, gvr: GroupVersionResource{"content.svc.run", "v1", "posts"}},
		{name: "kind is case-sensitive", gvk: GroupVersionKind{"content.svc.run", "v1alpha1", "post"}, gvr: GroupVersionResource{"content.svc.run", "v1alpha1", "Posts"}},
		{name: "plural is not a kind", gvk: GroupVersionKind{"content.svc.run", "v1alpha1", "posts"}, gvr: GroupVersionResource{"content.svc.run", "v1alpha1", "post"}},
	}
	for _, tc := range lookups {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := r.ByKind(tc.gvk)
			if got != tc.want || ok != (tc.want != nil) {
				t.Errorf("ByKind(%s): got %v, %v; want %v", tc.gvk, got, ok, tc.want)
			}
			got, ok = r.ByResource(tc.gvr)
			if got != tc.want || ok != (tc.want != nil) {
				t.Errorf("ByResource(%s): got %v, %v; want %v", tc.gvr, got, ok, tc.want)
			}
		})
	}

	t.Run("unregister a look-alike is a no-op", func(t *testing.T) {
		twin := newModel("content.svc.run", "v1alpha1", "Post", "posts")
		r.Unregister(twin)
		if got, ok := r.ByKind(post.GVK()); !ok || got != post {
			t.Fatalf("after Unregister(look-alike): ByKind(%s) = %v, %v; want the registered model", post.GVK(), got, ok)
		}
	})
	t.Run("unregister", func(t *testing.T) {
		r.Unregister(post)
		if got, ok := r.ByKind(post.GVK()); ok {
			t.Errorf("after Unregister: ByKind(%s) = %v, want not found", post.GVK(), got)
		}
		if got, ok := r.ByResource(post.GVR()); ok {
			t.Errorf("after Unregister: ByResource(%s) = %v, want not found", post.GVR(), got)
		}
		if got, ok := r.ByKind(role.GVK()); !ok || got != role {
			t.Errorf("after Unregister(post): ByKind(%s) = %v, %v; want role kept", role.GVK(), got, ok)
		}
		r.Unregister(post) // again: no-op
		if err := r.Register(post); err != nil {
			t.Errorf("Register after Unregister: got %v, want nil", err)
		}
	})
}

func TestRegistryModelsSorted(t *testing.T) {
	r := NewRegistry()
	// Registered out of order; Models sorts by group, version, kind.
	in := []*Model{
		newModel("z.example.com", "v1", "Alpha", "alphas"),
		newModel("", "v1alpha1", "User", "users"),
		newModel("a.example.com", "v2", "Alpha", "alphas"),
		newModel("a.example.com", "v1", "Zeta", "zetas"),
		newModel("", "v1alpha1", "Role", "roles"),
		newModel("a.example.com", "v1", "Beta", "betas"),
		newModel("", "v1", "Plugin", "plugins"),
	}
	want := []string{
		"v1/Plugin", "v1alpha1/Role", "v1alpha1/User",
		"a.example.com/v1/Beta", "a.example.com/v1/Zeta", "a.example.com/v2/Alpha",
		"z.example.com/v1/Alpha",
	}
	for _, m := range in {
		if err := r.Register(m); err != nil {
			t.Fatalf("Register(%s): %v", m.GVK(), err)
		}
	}
	for range 5 { // map order varies between calls
		var got []string
		for _, m := range r.Models() {
			got = append(got, m.GVK().String())
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("Models(): got %q, want %q", got, want)
		}
	}
	if got := NewRegistry().Models(); got == nil || len(got) != 0 {
		t.Errorf("Models() of an empty registry: got %#v, want an empty non-nil slice", got)
	}
}

// TestRegistryConcurrent is meant for -race: plugins register and
// unregister while requests look models up.
func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry()
	stable := newModel("", "v1", "Stable", "stables")
	if err := r.Register(stable); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range rounds {
				m := newModel(fmt.Sprintf("w%d.example.com", w), "v1", "Thing", fmt.Sprintf("things%d", i%4))
				if err := r.Register(m); err != nil && !strings.Contains(err.Error(), "already registered") {
					t.Errorf("Register(%s): %v", m.GVK(), err)
					return
				}
				r.Unregister(m)
			}
		}()
		go func() {
			defer wg.Done()
			for i := range rounds {
				if got, ok := r.ByResource(stable.GVR()); !ok || got != stable {
					t.Errorf("ByResource(%s) during churn: got %v, %v", stable.GVR(), got, ok)
					return
				}
				r.ByKind(GroupVersionKind{fmt.Sprintf("w%d.example.com", (w+1)%workers), "v1", "Thing"})
				if i%20 == 0 {
					_ = r.Models()
				}
			}
		}()
	}
	wg.Wait()
	if got := r.Models(); len(got) != 1 || got[0] != stable {
		t.Errorf("after churn: Models() = %v, want only %s", got, stable.GVK())
	}
}
