package core

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	gen "github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/codec"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/rbac"
	"github.com/svcrun/svc/runtime/store"
	"go.yaml.in/yaml/v3"
)

//go:embed extensions/roles.yaml
var builtinRoles string

// AdminUser is the first administrator, created on an empty store and
// bound to rbac.SuperRole.
const AdminUser = "admin"

// BuiltinRoles parses the built-in roles for brand.
func BuiltinRoles(brand string) ([]*gen.Role, error) {
	src := strings.ReplaceAll(builtinRoles, model.DefaultBrand, brand)
	dec := yaml.NewDecoder(strings.NewReader(src))
	m := gen.RoleModel()
	var out []*gen.Role
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("core: built-in roles: %w", err)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("core: built-in roles: %w", err)
		}
		obj, err := codec.Decode(m, js)
		if err != nil {
			return nil, fmt.Errorf("core: built-in role %d: %w", len(out)+1, err)
		}
		out = append(out, obj.(*gen.Role))
	}
}

// EnsureBuiltinRoles creates or overwrites the built-in roles (their rules
// are the service's; the API refuses to change them) and returns their
// names.
func EnsureBuiltinRoles(ctx context.Context, roles *gen.RoleClient, brand string) ([]string, error) {
	want, err := BuiltinRoles(brand)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(want))
	for i, r := range want {
		names[i] = r.Metadata.Name
	}
	for _, r := range want {
		if err := ensureRole(ctx, roles, r); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// ensureRole creates r or overwrites the stored one. Replicas sharing a
// store start side by side and race to do the same: a create that finds
// the role, or an update that finds it changed, reads it again.
func ensureRole(ctx context.Context, roles *gen.RoleClient, r *gen.Role) error {
	for attempt := 0; ; attempt++ {
		cur, err := roles.Get(ctx, r.Metadata.Name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			r.Metadata.Version = nil
			_, err = roles.Create(ctx, r)
			if errors.Is(err, store.ErrAlreadyExists) && attempt < 8 {
				continue
			}
			if err != nil {
				return fmt.Errorf("core: create role %s: %w", r.Metadata.Name, err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("core: read role %s: %w", r.Metadata.Name, err)
		}
		r.Metadata.Version = cur.Metadata.Version
		r.Metadata.Finalizers = cur.Metadata.Finalizers
		_, err = roles.Update(ctx, r)
		if errors.Is(err, store.ErrConflict) && attempt < 8 {
			continue
		}
		if err != nil {
			return fmt.Errorf("core: update role %s: %w", r.Metadata.Name, err)
		}
		return nil
	}
}

// EnsureAdmin creates user admin bound to super-role (rbac.SuperRole)
// when the store has no users at all, and reports whether it did. The
// password is the given one, or a random one written to out; it is never
// written anywhere again.
func EnsureAdmin(ctx context.Context, users *gen.UserClient, bindings *gen.RoleBindingClient, password string, out io.Writer) (bool, error) {
	existing, err := users.List(ctx, client.ListOptions{Size: 1})
	if err != nil {
		return false, fmt.Errorf("core: list users: %w", err)
	}
	if existing.Total > 0 {
		return false, nil
	}
	generated := password == ""
	if generated {
		if password, err = randomPassword(); err != nil {
			return false, err
		}
	}
	hash, err := authn.HashPassword(password)
	if err != nil {
		return false, fmt.Errorf("core: admin password: %w", err)
	}
	u := gen.NewUser(AdminUser)
	u.Spec.DisplayName = "Administrator"
	u.Spec.Password = &hash
	if _, err := users.Create(ctx, u); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			// Another replica of a shared store created it first: its
			// password stands, and only that replica printed one.
			return false, nil
		}
		return false, fmt.Errorf("core: create admin: %w", err)
	}
	if err := Bind(ctx, bindings, AdminUser, rbac.SuperRole); err != nil {
		return false, err
	}
	if generated {
		fmt.Fprintf(out, "svc: created user %q with password %s (shown once; set SVC_ADMIN_PASSWORD to choose it)\n", AdminUser, password)
	}
	return true, nil
}

// RandomPassword returns a new random password of 20 characters.
func RandomPassword() (string, error) { return randomPassword() }

func randomPassword() (string, error) {
	const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("core: random password: %w", err)
	}
	var s bytes.Buffer
	for _, c := range b {
		s.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return s.String(), nil
}
