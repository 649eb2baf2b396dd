package emit

import "testing"

func TestUnexported(t *testing.T) {
	for in, want := range map[string]string{"Person": "person", "HTMLInjection": "htmlInjection", "URL": "url", "AIModel": "aiModel", "X": "x", "Ab": "ab", "ABc": "aBc", "lower": "lower", "V2Thing": "v2Thing", "URLs": "urls", "URLsTable": "urlsTable", "IDsort": "iDsort"} {
		if got := unexported(in); got != want {
			t.Errorf("unexported(%q) = %q, want %q", in, got, want)
		}
	}
}
