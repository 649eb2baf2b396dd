package gotypes

import (
	"strings"
	"unicode"
)

// TypeName returns the Go type name for a component or property name:
// the name split at every character that is neither a letter nor a digit,
// each part's first letter upper-cased, the parts joined. "PersonSpec"
// stays "PersonSpec", "person_spec" becomes "PersonSpec". It returns ""
// when the result would not be an exported Go identifier.
func TypeName(name string) string {
	var b strings.Builder
	upper := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	s := b.String()
	for _, r := range s {
		if !unicode.IsUpper(r) {
			return ""
		}
		break
	}
	return s
}
