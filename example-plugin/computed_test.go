package example_test

import (
	"context"
	"strings"
	"testing"

	example "github.com/svcrun/svc/example-plugin"
	"github.com/svcrun/svc/runtime/client"
	"github.com/svcrun/svc/runtime/model"
	"github.com/svcrun/svc/runtime/object"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// TestComputedIndex is the README's recipe for an index the schema cannot
// declare: a key computed in Go (here the e-mail's domain, or "-" for
// none), added to the generated model before it is registered, with
// IndexVersion extended so persisted keys of the old functions are not
// reused.
func TestComputedIndex(t *testing.T) {
	ctx := context.Background()
	m := example.PersonModel()
	m.Indexes = append(m.Indexes, model.Index{
		Name: "emailDomain",
		Type: model.String,
		Keys: func(o object.Object, dst []model.Key) []model.Key {
			domain := "-"
			if p := o.(*example.Person); p.Spec.Email != nil {
				if _, d, ok := strings.Cut(*p.Spec.Email, "@"); ok {
					domain = strings.ToLower(d)
				}
			}
			return append(dst, model.StringKey(domain))
		},
	})
	m.IndexVersion += "+emailDomain.1"
	st := storetest.New(t, m)
	persons := example.NewPersonClient(st, m)
	for name, email := range map[string]string{"ann": "ann@Example.com", "bob": "bob@other.org", "cy": "", "dee": "dee@example.com"} {
		p := example.NewPerson(name)
		p.Spec.Name = name
		if email != "" {
			p.Spec.Email = &email
		}
		if _, err := persons.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := persons.List(ctx, client.ListOptions{FieldSelector: []string{"emailDomain=example.com"}, Sort: []string{"metadata.name,desc"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Items {
		names = append(names, p.Metadata.Name)
	}
	if strings.Join(names, ",") != "dee,ann" {
		t.Errorf("emailDomain=example.com: %v", names)
	}
	res, err = persons.List(ctx, client.ListOptions{Sort: []string{"emailDomain", "metadata.name"}})
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, p := range res.Items {
		names = append(names, p.Metadata.Name)
	}
	if strings.Join(names, ",") != "cy,ann,dee,bob" {
		t.Errorf("sorted by emailDomain: %v", names)
	}
}
