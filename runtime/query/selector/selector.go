package selector

import (
	"slices"
	"strconv"
	"strings"
)

// Operator is the relation a Requirement states between a key and its
// values. The zero Operator is invalid, so a zero Requirement matches nothing.
type Operator int

// The operators of label and field terms. Fields use Equals, NotEquals, In,
// NotIn and the range operators; labels every operator but the range ones,
// since label values have no order.
const (
	Equals         Operator = iota + 1 // k=v
	NotEquals                          // k!=v
	In                                 // k=(v1,v2)
	NotIn                              // k!=(v1,v2)
	Exists                             // k
	DoesNotExist                       // !k
	LessThan                           // f<v
	LessOrEqual                        // f<=v
	GreaterThan                        // f>v
	GreaterOrEqual                     // f>=v
)

// String returns the operator's name, such as "Equals" or "DoesNotExist".
func (o Operator) String() string {
	switch o {
	case Equals:
		return "Equals"
	case NotEquals:
		return "NotEquals"
	case In:
		return "In"
	case NotIn:
		return "NotIn"
	case Exists:
		return "Exists"
	case DoesNotExist:
		return "DoesNotExist"
	case LessThan:
		return "LessThan"
	case LessOrEqual:
		return "LessOrEqual"
	case GreaterThan:
		return "GreaterThan"
	case GreaterOrEqual:
		return "GreaterOrEqual"
	}
	return "Operator(" + strconv.Itoa(int(o)) + ")"
}

// IsRange reports whether o is one of the range operators <, <=, > and >=.
func (o Operator) IsRange() bool { return o >= LessThan && o <= GreaterOrEqual }

// Holds reports whether a range operator holds for a value that compares
// to the term's bound as c does (c < 0: the value is below the bound). It
// is false for other operators. Only the caller knows the field's type, so
// it does the comparing: 9 < 10 as numbers but "9" > "10" as text.
func (o Operator) Holds(c int) bool {
	switch o {
	case LessThan:
		return c < 0
	case LessOrEqual:
		return c <= 0
	case GreaterThan:
		return c > 0
	case GreaterOrEqual:
		return c >= 0
	}
	return false
}

// Requirement is one parsed term: a key, an operator and the operator's
// values. Equals, NotEquals and the range operators carry exactly one value;
// In and NotIn carry one or more, sorted and without duplicates; Exists and
// DoesNotExist carry none.
// The zero Requirement is invalid and matches nothing. Requirements built by
// ParseLabelTerm and ParseFieldTerm always satisfy these rules; one built by
// hand is trusted as it is.
type Requirement struct {
	// Key is a label key, or a field path such as "spec.age" (the alias
	// "name" is already rewritten to "metadata.name").
	Key    string
	Op     Operator
	Values []string
}

// String returns the term in canonical form ("k=v", "k!=v", "k=(a,b)",
// "k!=(a,b)", "k", "!k", "f<v", "f<=v", "f>v", "f>=v"). For a parsed Requirement it parses back, with the
// same parser, to an equal Requirement. An invalid operator prints as
// "<invalid Operator(n) requirement on key>".
func (r Requirement) String() string {
	switch r.Op {
	case Exists:
		return r.Key
	case DoesNotExist:
		return "!" + r.Key
	case Equals, NotEquals, LessThan, LessOrEqual, GreaterThan, GreaterOrEqual:
		v := ""
		if len(r.Values) > 0 {
			v = r.Values[0]
		}
		return r.Key + r.Op.symbol() + v
	case In, NotIn:
		var b strings.Builder
		n := len(r.Key) + 4
		for _, v := range r.Values {
			n += len(v) + 1
		}
		b.Grow(n)
		b.WriteString(r.Key)
		if r.Op == NotIn {
			b.WriteByte('!')
		}
		b.WriteString("=(")
		for i, v := range r.Values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(v)
		}
		b.WriteByte(')')
		return b.String()
	}
	return "<invalid " + r.Op.String() + " requirement on " + r.Key + ">"
}

// Matches reports whether an object satisfies r, given the object's value v
// for r.Key and ok = whether it has one. It implements label semantics:
// NotEquals and NotIn match an object that lacks the key (ok == false).
//
// Field selectors exclude objects that have no value for the field, whatever
// the operator; the query engine checks ok itself before calling Matches for
// a field requirement. Range requirements order typed values, which v as
// text cannot do, so Matches is false for them: the query engine compares
// the field's keys and asks Op.Holds.
func (r Requirement) Matches(v string, ok bool) bool {
	switch r.Op {
	case Equals:
		return ok && len(r.Values) > 0 && v == r.Values[0]
	case NotEquals:
		return !ok || len(r.Values) == 0 || v != r.Values[0]
	case In:
		return ok && slices.Contains(r.Values, v)
	case NotIn:
		return !ok || !slices.Contains(r.Values, v)
	case Exists:
		return ok
	case DoesNotExist:
		return !ok
	}
	return false
}

// Selector is a list of Requirements that must all hold (AND). A nil or empty
// Selector selects everything.
type Selector []Requirement

// String returns the requirements' canonical forms joined by "," in order. It
// is meant for logs and messages: the query parameters take one term per
// value, so the joined form is not itself a parsable term.
func (s Selector) String() string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0].String()
	}
	parts := make([]string, len(s))
	for i, r := range s {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// Matches reports whether labels satisfy every requirement of s, with label
// semantics (see Requirement.Matches). A nil Labels has no labels.
func (s Selector) Matches(labels Labels) bool {
	for _, r := range s {
		var v string
		var ok bool
		if labels != nil {
			v, ok = labels.Get(r.Key)
		}
		if !r.Matches(v, ok) {
			return false
		}
	}
	return true
}

// Labels gives access to an object's labels without copying them.
type Labels interface {
	// Get returns the value of the label key and whether the object has it.
	Get(key string) (value string, ok bool)
}

// Set is a map of labels; it implements Labels.
type Set map[string]string

// Get returns the value of key and whether s has it.
func (s Set) Get(key string) (string, bool) {
	v, ok := s[key]
	return v, ok
}
