package object

import (
	"errors"
	"strings"
	"testing"
)

// wantViolation is one expected FieldError: its exact field path and a
// substring of its message.
type wantViolation struct {
	field string
	msg   string
}

func TestValidateMetadata(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name string
		md   Metadata
		want []wantViolation // in order; nil for valid metadata
	}{
		{name: "name only", md: Metadata{Name: "post-1"}},
		{name: "everything valid", md: Metadata{
			Name:        "post-1",
			Labels:      map[string]string{"app": "blog", "svc.run/hidden": "true", "empty": ""},
			Annotations: map[string]string{"rbac.authorization.svc.run/display-name": "Any text at all, spaces included!"},
			Finalizers:  []string{"svc.run/cleanup", "plain"},
		}},
		{name: "name 253", md: Metadata{Name: long(253)}},
		{name: "bad name", md: Metadata{Name: "Bad_Name"}, want: []wantViolation{{"metadata.name", msgName}}},
		{name: "name too long", md: Metadata{Name: long(254)}, want: []wantViolation{{"metadata.name", msgLong253}}},
		{name: "empty name with generateName", md: Metadata{GenerateName: "post-"}},
		{name: "generateName without dash", md: Metadata{GenerateName: "post"}},
		{name: "generateName of dashes after a letter", md: Metadata{GenerateName: "a--"}},
		{name: "generateName 245", md: Metadata{GenerateName: long(245)}},
		{name: "generateName 244 and dash", md: Metadata{GenerateName: long(244) + "-"}},
		{name: "generateName 246", md: Metadata{GenerateName: long(246)},
			want: []wantViolation{{"metadata.generateName", "at most 245 characters"}}},
		{name: "generateName leading dash", md: Metadata{GenerateName: "-post"},
			want: []wantViolation{{"metadata.generateName", "must be a valid name prefix"}}},
		{name: "generateName only dash", md: Metadata{GenerateName: "-"},
			want: []wantViolation{{"metadata.generateName", "must be a valid name prefix"}}},
		{name: "generateName upper case", md: Metadata{GenerateName: "Post-"},
			want: []wantViolation{{"metadata.generateName", "must be a valid name prefix"}}},
		{name: "generateName dot", md: Metadata{GenerateName: "a.b-"},
			want: []wantViolation{{"metadata.generateName", "must be a valid name prefix"}}},
		{name: "name wins over generateName", md: Metadata{Name: "given", GenerateName: "-ignored-"}},
		{name: "empty name without generateName", md: Metadata{},
			want: []wantViolation{{"metadata.name", "is required (or set metadata.generateName)"}}},
		{name: "bad label key", md: Metadata{Name: "n", Labels: map[string]string{"-app": "web"}},
			want: []wantViolation{{"metadata.labels[-app]", "invalid key: name part " + msgQualified}}},
		{name: "bad label key prefix", md: Metadata{Name: "n", Labels: map[string]string{"Svc.Run/app": "web"}},
			want: []wantViolation{{"metadata.labels[Svc.Run/app]", "invalid key: prefix part"}}},
		{name: "bad label value", md: Metadata{Name: "n", Labels: map[string]string{"app": "web site"}},
			want: []wantViolation{{"metadata.labels[app]", "invalid value: " + msgValue}}},
		{name: "label value too long", md: Metadata{Name: "n", Labels: map[string]string{"app": long(64)}},
			want: []wantViolation{{"metadata.labels[app]", "invalid value: " + msgLong63}}},
		{name: "bad label key and value", md: Metadata{Name: "n", Labels: map[string]string{"a/b/c": "-x-"}},
			want: []wantViolation{{"metadata.labels[a/b/c]", "invalid key"}, {"metadata.labels[a/b/c]", "invalid value"}}},
		{name: "bad annotation key", md: Metadata{Name: "n", Annotations: map[string]string{"bad key": "v"}},
			want: []wantViolation{{"metadata.annotations[bad key]", "invalid key"}}},
		{name: "bad finalizer", md: Metadata{Name: "n", Finalizers: []string{"svc.run/ok", "not ok", "also-ok"}},
			want: []wantViolation{{"metadata.finalizers[1]", msgQualified}}},
		{name: "empty finalizer", md: Metadata{Name: "n", Finalizers: []string{""}},
			want: []wantViolation{{"metadata.finalizers[0]", "must not be empty"}}},
		{name: "all violations at once, maps in key order", md: Metadata{
			Labels:      map[string]string{"z-ok": "fine", "b!": "x", "a!": "-", "m": "ok"},
			Annotations: map[string]string{"y y": "v", "x x": "v"},
			Finalizers:  []string{"/", "ok", "Bad/x"},
		}, want: []wantViolation{
			{"metadata.name", "is required"},
			{"metadata.labels[a!]", "invalid key"},
			{"metadata.labels[a!]", "invalid value"},
			{"metadata.labels[b!]", "invalid key"},
			{"metadata.annotations[x x]", "invalid key"},
			{"metadata.annotations[y y]", "invalid key"},
			{"metadata.finalizers[0]", "prefix part must not be empty"},
			{"metadata.finalizers[2]", "prefix part"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Run several times: map order must not change the result.
			for range 5 {
				var errs FieldErrors
				ValidateMetadata(&tc.md, &errs)
				if len(errs) != len(tc.want) {
					t.Fatalf("ValidateMetadata(%+v):\n got %d violations %+v\nwant %d %+v", tc.md, len(errs), errs, len(tc.want), tc.want)
				}
				for i, w := range tc.want {
					if errs[i].Field != w.field || !strings.Contains(errs[i].Message, w.msg) {
						t.Fatalf("ValidateMetadata(%+v) violation %d:\n got %s: %s\nwant %s: ...%s...", tc.md, i, errs[i].Field, errs[i].Message, w.field, w.msg)
					}
				}
				if (errs.Err() == nil) != (tc.want == nil) {
					t.Fatalf("ValidateMetadata(%+v): Err() = %v, want error=%v", tc.md, errs.Err(), tc.want != nil)
				}
			}
		})
	}
}

func TestValidateMetadataAppends(t *testing.T) {
	// Violations are appended to what the caller already collected (a
	// model validator may run first).
	errs := FieldErrors{{Field: "spec.age", Message: "must be <= 150"}}
	ValidateMetadata(&Metadata{}, &errs)
	if len(errs) != 2 || errs[0].Field != "spec.age" || errs[1].Field != "metadata.name" {
		t.Errorf("ValidateMetadata on a non-empty list: got %+v, want spec.age then metadata.name", errs)
	}
}

func TestFieldErrors(t *testing.T) {
	var none FieldErrors
	if err := none.Err(); err != nil {
		t.Errorf("Err() of no violations: got %v, want nil", err)
	}
	var errs FieldErrors
	errs.Add("spec.age", "must be <= %d", 150)
	errs.Add("metadata.labels[app]", "invalid value: %s", "x")
	err := errs.Err()
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("Err(): got %T, want *InvalidError", err)
	}
	if len(ie.Errors) != 2 {
		t.Errorf("InvalidError.Errors: got %+v, want 2 violations", ie.Errors)
	}
	want := "invalid object: spec.age: must be <= 150; metadata.labels[app]: invalid value: x"
	if got := err.Error(); got != want {
		t.Errorf("Error(): got %q, want %q", got, want)
	}
}
