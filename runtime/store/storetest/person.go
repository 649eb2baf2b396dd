package storetest

import (
	"fmt"
	"net/mail"

	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
)

// Person is a hand-written model shaped like the example plugin's.
type Person struct {
	object.Envelope
	Spec   PersonSpec    `json:"spec"`
	Status *PersonStatus `json:"status,omitempty"`
}

// PersonSpec is the desired state of a Person.
type PersonSpec struct {
	Name   string   `json:"name"`
	Age    *int64   `json:"age,omitempty"`
	Gender string   `json:"gender,omitempty"`
	Email  string   `json:"email,omitempty"`
	Friend string   `json:"friend,omitempty"`
	Tags   []string `json:"tags,omitempty"`
}

// PersonStatus is the observed state of a Person.
type PersonStatus struct {
	FriendCount int64 `json:"friendCount"`
}

// PersonModel returns a fresh Person model with five indexes: spec.name,
// spec.age, spec.email (unique), spec.friend and spec.tags (multi-valued).
func PersonModel() *model.Model {
	str := func(get func(*PersonSpec) string) model.KeyFunc {
		return func(o object.Object, dst []model.Key) []model.Key {
			if v := get(&o.(*Person).Spec); v != "" {
				dst = append(dst, model.StringKey(v))
			}
			return dst
		}
	}
	return &model.Model{
		Group: "people.example.com", Version: "v1alpha1", Kind: "Person", Plural: "persons", Singular: "person",
		New: func() object.Object { return &Person{} },
		Indexes: []model.Index{
			{Name: "spec.name", Type: model.String, Keys: str(func(s *PersonSpec) string { return s.Name })},
			{Name: "spec.age", Type: model.Int, Keys: func(o object.Object, dst []model.Key) []model.Key {
				if a := o.(*Person).Spec.Age; a != nil {
					dst = append(dst, model.IntKey(*a))
				}
				return dst
			}},
			{Name: "spec.email", Type: model.String, Unique: true, Keys: str(func(s *PersonSpec) string { return s.Email })},
			{Name: "spec.friend", Type: model.String, Keys: str(func(s *PersonSpec) string { return s.Friend })},
			{Name: "spec.tags", Type: model.String, Multi: true, Keys: func(o object.Object, dst []model.Key) []model.Key {
				for _, t := range o.(*Person).Spec.Tags {
					dst = append(dst, model.StringKey(t))
				}
				return dst
			}},
		},
		Validate:     validatePerson,
		IndexVersion: "1",
	}
}

func validatePerson(o object.Object, errs *object.FieldErrors) {
	p := o.(*Person)
	s := &p.Spec
	switch {
	case s.Name == "":
		errs.Add("spec.name", "is required")
	case len(s.Name) > 100:
		errs.Add("spec.name", "must be at most 100 characters")
	}
	if s.Age != nil && (*s.Age < 0 || *s.Age > 150) {
		errs.Add("spec.age", "must be between 0 and 150")
	}
	if s.Gender != "" && s.Gender != "MALE" && s.Gender != "FEMALE" {
		errs.Add("spec.gender", "must be one of MALE, FEMALE")
	}
	if s.Email != "" {
		if _, err := mail.ParseAddress(s.Email); err != nil {
			errs.Add("spec.email", "must be an email address")
		}
	}
	for i, t := range s.Tags {
		if len(t) > 63 {
			errs.Add(fmt.Sprintf("spec.tags[%d]", i), "must be at most 63 characters")
		}
	}
}

// NewPerson returns a Person with the given name and spec.
func NewPerson(name string, spec PersonSpec) *Person {
	p := &Person{Spec: spec}
	p.Metadata.Name = name
	return p
}

// Int64 returns a pointer to v.
func Int64(v int64) *int64 { return &v }
