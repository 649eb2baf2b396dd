package core

import (
	"context"
	"encoding/json"
	"strings"

	gen "github.com/svcrun/svc/generated/core"
	"github.com/svcrun/svc/runtime/authn"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
)

// ProtectUsers makes the generic users API keep password hashes inside:
// responses never carry spec.password, a create hashes a password it is
// given, and an update keeps the stored hash (passwords change through the
// console API).
func ProtectUsers(m *model.Model) {
	m.Present = presentUser
	m.Admit = func(_ context.Context, old, obj object.Object) error {
		u := obj.(*gen.User)
		if old != nil {
			u.Spec.Password = old.(*gen.User).Spec.Password
			return nil
		}
		if u.Spec.Password == nil || *u.Spec.Password == "" {
			u.Spec.Password = nil
			return nil
		}
		hash, err := authn.HashPassword(*u.Spec.Password)
		if err != nil {
			return &object.InvalidError{Errors: object.FieldErrors{{Field: "spec.password", Message: err.Error()}}}
		}
		u.Spec.Password = &hash
		return nil
	}
}

// presentUser drops spec.password from a stored user's JSON.
func presentUser(data []byte) []byte {
	if !strings.Contains(string(data), `"password"`) {
		return data
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil {
		return data
	}
	var spec map[string]json.RawMessage
	if json.Unmarshal(doc["spec"], &spec) != nil {
		return data
	}
	delete(spec, "password")
	var err error
	if doc["spec"], err = json.Marshal(spec); err != nil {
		return data
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return data
	}
	return out
}
