package object

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestUnstructuredRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // canonical output: envelope, then other fields by key
	}{
		{
			name: "envelope only",
			in:   `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"r"}}`,
			want: `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"r"}}`,
		},
		{
			name: "unknown top-level fields kept and sorted",
			in: `{"status":{"phase":"Ready"},"rules":[{"verbs":["get"]}],"kind":"Role","spec":{"b":2,"a":1},
				"apiVersion":"v1alpha1","metadata":{"name":"r"},"zeta":true,"alpha":null}`,
			want: `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"r"},"rules":[{"verbs":["get"]}],"spec":{"b":2,"a":1},"status":{"phase":"Ready"},"zeta":true}`,
		},
		{
			name: "whitespace compacted, nested order kept",
			in:   "{ \"kind\" : \"K\" ,\n \"apiVersion\":\"g.example.com/v1\", \"metadata\":{\"name\":\"n\"},\n \"spec\" : { \"z\" : [ 1 , 2 ] , \"a\" : \"x y\" } }",
			want: `{"apiVersion":"g.example.com/v1","kind":"K","metadata":{"name":"n"},"spec":{"z":[1,2],"a":"x y"}}`,
		},
		{
			name: "null fields omitted",
			in: `{"apiVersion":"v1","kind":"K","metadata":{"name":"n","labels":null,"annotations":null,"finalizers":null,` +
				`"version":null,"creationTimestamp":null,"deletionTimestamp":null,"generateName":null},"spec":null,"status" : null }`,
			want: `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"}}`,
		},
		{
			name: "full metadata",
			in: `{"apiVersion":"v1","kind":"K","metadata":{"finalizers":["f"],"name":"n","generateName":"n-","labels":{"b":"2","a":"1"},` +
				`"annotations":{"x":"y"},"version":3,"creationTimestamp":"2024-01-02T03:04:05.000000006Z","deletionTimestamp":"2024-01-02T04:04:05Z"}}`,
			want: `{"apiVersion":"v1","kind":"K","metadata":{"name":"n","generateName":"n-","labels":{"a":"1","b":"2"},"annotations":{"x":"y"},` +
				`"version":3,"creationTimestamp":"2024-01-02T03:04:05.000000006Z","deletionTimestamp":"2024-01-02T04:04:05Z","finalizers":["f"]}}`,
		},
		{
			name: "unicode and escapes in fields",
			in:   `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"spec":{"s":"caf\u00e9 \"q\" \\ <b>"}}`,
			want: `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"spec":{"s":"caf\u00e9 \"q\" \\ \u003cb\u003e"}}`,
		},
		{
			name: "missing envelope fields",
			in:   `{"spec":{}}`,
			want: `{"apiVersion":"","kind":"","metadata":{"name":""},"spec":{}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var u Unstructured
			if err := json.Unmarshal([]byte(tc.in), &u); err != nil {
				t.Fatalf("Unmarshal(%s): %v", tc.in, err)
			}
			got, err := json.Marshal(u)
			if err != nil {
				t.Fatalf("Marshal after Unmarshal(%s): %v", tc.in, err)
			}
			if string(got) != tc.want {
				t.Errorf("round trip of %s:\n got %s\nwant %s", tc.in, got, tc.want)
			}
			// Pointer and value encode alike, and the output is stable.
			for range 10 {
				again, err := json.Marshal(&u)
				if err != nil || !bytes.Equal(again, got) {
					t.Fatalf("Marshal(&u) again: got %s, %v; want %s", again, err, got)
				}
			}
			// The canonical form is a fixed point.
			var u2 Unstructured
			if err := json.Unmarshal(got, &u2); err != nil {
				t.Fatalf("Unmarshal(%s): %v", got, err)
			}
			if again, _ := json.Marshal(u2); !bytes.Equal(again, got) {
				t.Errorf("second round trip:\n got %s\nwant %s", again, got)
			}
		})
	}
}

func TestUnstructuredDecodedEnvelope(t *testing.T) {
	in := `{"apiVersion":"content.svc.run/v1alpha1","kind":"Post","metadata":{"name":"p","version":4,` +
		`"creationTimestamp":"2024-05-06T07:08:09Z","labels":{"app":"blog"}},"spec":{"title":"T"}}`
	var u Unstructured
	if err := json.Unmarshal([]byte(in), &u); err != nil {
		t.Fatal(err)
	}
	md := u.GetEnvelope().Metadata
	checks := []struct{ what, got, want string }{
		{"apiVersion", u.APIVersion, "content.svc.run/v1alpha1"},
		{"kind", u.Kind, "Post"},
		{"metadata.name", md.Name, "p"},
		{"metadata.labels[app]", md.Labels["app"], "blog"},
		{"spec", string(u.Fields["spec"]), `{"title":"T"}`},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("decoded %s: got %q, want %q", c.what, c.got, c.want)
		}
	}
	if md.GetVersion() != 4 {
		t.Errorf("decoded metadata.version: got %d, want 4", md.GetVersion())
	}
	if want := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC); md.CreationTimestamp == nil || !md.CreationTimestamp.Equal(want) {
		t.Errorf("decoded metadata.creationTimestamp: got %v, want %v", md.CreationTimestamp, want)
	}
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if _, ok := u.Fields[k]; ok {
			t.Errorf("Fields holds envelope key %q", k)
		}
	}
}

func TestUnstructuredDeterministicAcrossInputOrder(t *testing.T) {
	inputs := []string{
		`{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"a":1,"b":2,"c":3,"d":4,"e":5}`,
		`{"e":5,"d":4,"c":3,"b":2,"a":1,"metadata":{"name":"n"},"kind":"K","apiVersion":"v1"}`,
		`{"c":3,"kind":"K","a":1,"e":5,"apiVersion":"v1","d":4,"metadata":{"name":"n"},"b":2}`,
	}
	want := `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"a":1,"b":2,"c":3,"d":4,"e":5}`
	for _, in := range inputs {
		t.Run(in, func(t *testing.T) {
			var u Unstructured
			if err := json.Unmarshal([]byte(in), &u); err != nil {
				t.Fatal(err)
			}
			if got, err := json.Marshal(u); err != nil || string(got) != want {
				t.Errorf("Marshal of %s: got %s, %v; want %s", in, got, err, want)
			}
		})
	}
}

func TestUnstructuredUnmarshalResets(t *testing.T) {
	var u Unstructured
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"A","metadata":{"name":"a","labels":{"x":"y"}},"spec":{}}`), &u); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"kind":"B","metadata":{"name":"b"}}`), &u); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(u)
	if want := `{"apiVersion":"","kind":"B","metadata":{"name":"b"}}`; string(got) != want {
		t.Errorf("decoding into a used Unstructured: got %s, want %s (nothing left from before)", got, want)
	}
}

func TestUnstructuredUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // substring; the field at fault is named
	}{
		{name: "metadata name not a string", in: `{"metadata":{"name":5}}`, wantErr: "metadata: "},
		{name: "metadata not an object", in: `{"metadata":"x"}`, wantErr: "metadata: "},
		{name: "labels not strings", in: `{"metadata":{"labels":{"a":1}}}`, wantErr: "metadata: "},
		{name: "version not a number", in: `{"metadata":{"version":"3"}}`, wantErr: "metadata: "},
		{name: "timestamp not RFC 3339", in: `{"metadata":{"creationTimestamp":"yesterday"}}`, wantErr: "metadata: "},
		{name: "kind not a string", in: `{"kind":3}`, wantErr: "kind: "},
		{name: "apiVersion not a string", in: `{"apiVersion":{}}`, wantErr: "apiVersion: "},
		{name: "not an object", in: `[1,2]`, wantErr: "cannot unmarshal array"},
		{name: "syntax error", in: `{"metadata":{"name":"x"`, wantErr: "unexpected end of JSON input"},
		{name: "string", in: `"x"`, wantErr: "cannot unmarshal string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var u Unstructured
			err := json.Unmarshal([]byte(tc.in), &u)
			if err == nil {
				t.Fatalf("Unmarshal(%s): got nil error, want one containing %q", tc.in, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Unmarshal(%s): got error %q, want it to contain %q", tc.in, err, tc.wantErr)
			}
		})
	}
}

func TestUnstructuredMarshalFields(t *testing.T) {
	base := Envelope{APIVersion: "v1", Kind: "K", Metadata: Metadata{Name: "n"}}
	tests := []struct {
		name    string
		fields  map[string]json.RawMessage
		want    string
		wantErr string
	}{
		{name: "nil fields", fields: nil, want: `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"}}`},
		{name: "empty and null values omitted", fields: map[string]json.RawMessage{"a": nil, "b": json.RawMessage(""), "c": json.RawMessage("null"), "d": json.RawMessage("0")},
			want: `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"d":0}`},
		{name: "values compacted", fields: map[string]json.RawMessage{"spec": json.RawMessage("{ \"a\" : [ 1 ,\n 2 ] }")},
			want: `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"spec":{"a":[1,2]}}`},
		{name: "key escaped", fields: map[string]json.RawMessage{`we"ird`: json.RawMessage("1")},
			want: `{"apiVersion":"v1","kind":"K","metadata":{"name":"n"},"we\"ird":1}`},
		{name: "invalid raw value names the field", fields: map[string]json.RawMessage{"spec": json.RawMessage("{bad")}, wantErr: "field spec"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := Unstructured{Envelope: base, Fields: tc.fields}
			got, err := u.MarshalJSON()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("MarshalJSON(fields %q): got %s, %v; want error containing %q", tc.fields, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("MarshalJSON(fields %q):\n got %s, %v\nwant %s", tc.fields, got, err, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("MarshalJSON(fields %q): output %s is not valid JSON", tc.fields, got)
			}
		})
	}
}
