package selector

import (
	"slices"
	"strconv"
	"strings"

	"github.com/svcrun/svc/runtime/object"
)

// Query parameter names, used in Error.Param.
const (
	LabelParam = "labelSelector"
	FieldParam = "fieldSelector"
)

// Error is a malformed selector term. The HTTP layer answers it with 400.
type Error struct {
	// Param is the query parameter the term came from: "labelSelector" or
	// "fieldSelector".
	Param string
	// Term is the term as the client sent it.
	Term string
	// Reason says what was found and what was expected.
	Reason string
}

// Error returns `invalid <param> "<term>": <reason>`.
func (e *Error) Error() string {
	return "invalid " + e.Param + " " + strconv.Quote(e.Term) + ": " + e.Reason
}

const (
	labelForms = `expected "<key>=<value>", "<key>!=<value>", "<key>=(<v1>,<v2>)", "<key>" or "!<key>"`
	fieldForms = `expected "<field>=<value>", "<field>!=<value>", "<field>=(<v1>,<v2>)", ` +
		`"<field><<value>", "<field><=<value>", "<field>><value>" or "<field>>=<value>"`
)

// ParseLabels parses the values of the repeated labelSelector parameter, one
// term per value, into a Selector that ANDs them in the order given. Empty
// (or all-space) values are skipped; when nothing is left the result is nil,
// which selects everything. The first malformed term stops parsing and is
// returned as an *Error.
func ParseLabels(terms []string) (Selector, error) {
	return parseAll(terms, ParseLabelTerm)
}

// ParseFields parses the values of the repeated fieldSelector parameter like
// ParseLabels does for labels. It checks syntax only: whether each field is
// indexed is for the query engine to decide.
func ParseFields(terms []string) (Selector, error) {
	return parseAll(terms, ParseFieldTerm)
}

func parseAll(terms []string, parse func(string) (Requirement, error)) (Selector, error) {
	var sel Selector
	for _, t := range terms {
		if strings.TrimSpace(t) == "" {
			continue
		}
		r, err := parse(t)
		if err != nil {
			return nil, err
		}
		if sel == nil {
			sel = make(Selector, 0, len(terms))
		}
		sel = append(sel, r)
	}
	return sel, nil
}

// ParseLabelTerm parses one label selector term (see the package comment for
// the grammar). Keys must pass object.ValidateLabelKey and values
// object.ValidateLabelValue, which allows the empty value: "k=" selects
// objects whose label k is "", as in Kubernetes. Set elements must be
// non-empty. Errors are *Error with Param "labelSelector". Unlike
// ParseLabels, an empty term is an error here, because it yields no
// Requirement.
func ParseLabelTerm(term string) (Requirement, error) {
	fail := func(reason string) (Requirement, error) {
		return Requirement{}, &Error{Param: LabelParam, Term: term, Reason: reason}
	}
	s := strings.TrimSpace(term)
	if s == "" {
		return fail("found an empty term; " + labelForms)
	}
	t := scan(s)
	switch t.op {
	case Exists, DoesNotExist:
		if t.key == "" {
			return fail(`found "!" with no key; expected "!<key>"`)
		}
		if err := object.ValidateLabelKey(t.key); err != nil {
			return fail("invalid key " + strconv.Quote(t.key) + ": " + err.Error())
		}
		return Requirement{Key: t.key, Op: t.op}, nil
	}

	// Equals or NotEquals, possibly with a set.
	opText := t.op.symbol()
	switch {
	case t.key == "":
		return fail(`found no key before "` + opText + `"; expected "<key>` + opText + `<value>"`)
	case t.key[0] == '!':
		return fail(`found "!" before a key that has a value; "!<key>" takes no value, ` + labelForms)
	}
	if err := object.ValidateLabelKey(t.key); err != nil {
		return fail("invalid key " + strconv.Quote(t.key) + ": " + err.Error())
	}
	if set, ok := setBody(t.value); ok {
		values, reason := splitSet(set, validateLabelSetValue)
		if reason != "" {
			return fail(reason)
		}
		return Requirement{Key: t.key, Op: t.op.setOp(), Values: values}, nil
	}
	if err := object.ValidateLabelValue(t.value); err != nil {
		return fail(labelValueReason(t.value, err))
	}
	return Requirement{Key: t.key, Op: t.op, Values: []string{t.value}}, nil
}

// ParseFieldTerm parses one field selector term (see the package comment for
// the grammar). The key must be a dotted field path; "name" becomes
// "metadata.name". Values are any non-empty strings. Errors are *Error with
// Param "fieldSelector". Unlike ParseFields, an empty term is an error here.
func ParseFieldTerm(term string) (Requirement, error) {
	fail := func(reason string) (Requirement, error) {
		return Requirement{}, &Error{Param: FieldParam, Term: term, Reason: reason}
	}
	s := strings.TrimSpace(term)
	if s == "" {
		return fail("found an empty term; " + fieldForms)
	}
	t := scanField(s)
	opText := t.op.symbol()
	switch {
	case t.op == Exists:
		return fail(`found a field with no operator; ` + fieldForms + ` (fields have no exists form)`)
	case t.op == DoesNotExist:
		return fail(`found "!<field>"; ` + fieldForms + ` (fields have no does-not-exist form)`)
	case t.key == "":
		return fail(`found no field before "` + opText + `"; expected "<field>` + opText + `<value>"`)
	case !isFieldPath(t.key):
		return fail("invalid field " + strconv.Quote(t.key) + `: expected a dotted path of segments made of ` +
			`letters, digits, '-' or '_' (e.g. "spec.age" or "metadata.name")`)
	case t.value == "":
		return fail(`found no value after "` + opText + `"; expected "<field>` + opText + `<value>"`)
	}
	key := t.key
	if key == "name" {
		key = "metadata.name"
	}
	if set, ok := setBody(t.value); ok {
		if t.op.IsRange() {
			return fail(`found a set after "` + opText + `"; a range term takes one value, as in "<field>` + opText + `<value>"`)
		}
		values, reason := splitSet(set, nil)
		if reason != "" {
			return fail(reason)
		}
		return Requirement{Key: key, Op: t.op.setOp(), Values: values}, nil
	}
	return Requirement{Key: key, Op: t.op, Values: []string{t.value}}, nil
}

// scanned is a term cut into its parts by scan or scanField.
type scanned struct {
	key   string
	op    Operator // Equals, NotEquals, Exists, DoesNotExist or (fields) a range
	value string   // for every operator but Exists and DoesNotExist
}

// scan cuts a trimmed, non-empty term at its operator. The first '=' is the
// operator, and it is "!=" when the byte before it is '!'. Keys never contain
// '=' or '!', so this is also the first "=" or "!=" of the term, and whatever
// follows is the value, '=' and all. A term with no '=' is "!key" or "key".
func scan(s string) scanned {
	i := strings.IndexByte(s, '=')
	switch {
	case i < 0 && s[0] == '!':
		return scanned{key: s[1:], op: DoesNotExist}
	case i < 0:
		return scanned{key: s, op: Exists}
	case i > 0 && s[i-1] == '!':
		return scanned{key: s[:i-1], op: NotEquals, value: s[i+1:]}
	default:
		return scanned{key: s[:i], op: Equals, value: s[i+1:]}
	}
}

// scanField is scan for a field term, which may also be a range. Field
// paths hold none of '=', '<', '>' and '!', so the first of "=<>" in the
// term starts its operator: '<' or '>' followed by '=' is "<=" or ">=",
// and '=' is cut as scan cuts it. As with "=", whatever follows the
// operator is the value: "f>=>x" is f >= ">x".
func scanField(s string) scanned {
	i := strings.IndexAny(s, "=<>")
	if i < 0 || s[i] == '=' {
		return scan(s)
	}
	op := LessThan
	if s[i] == '>' {
		op = GreaterThan
	}
	n := 1
	if i+1 < len(s) && s[i+1] == '=' {
		op, n = op+1, 2 // LessOrEqual, GreaterOrEqual
	}
	return scanned{key: s[:i], op: op, value: s[i+n:]}
}

// symbol is the text of a valued operator in a term.
func (o Operator) symbol() string {
	switch o {
	case NotEquals:
		return "!="
	case LessThan:
		return "<"
	case LessOrEqual:
		return "<="
	case GreaterThan:
		return ">"
	case GreaterOrEqual:
		return ">="
	}
	return "="
}

// setOp turns Equals into In and NotEquals into NotIn.
func (o Operator) setOp() Operator {
	if o == NotEquals {
		return NotIn
	}
	return In
}

// setBody returns the inside of a value written as "(...)".
func setBody(value string) (string, bool) {
	if len(value) >= 2 && value[0] == '(' && value[len(value)-1] == ')' {
		return value[1 : len(value)-1], true
	}
	return "", false
}

// splitSet splits the inside of a set on ',' and returns its values sorted and
// without duplicates, or a reason when the set is empty, holds an empty value,
// or check refuses a value.
func splitSet(body string, check func(string) string) ([]string, string) {
	if body == "" {
		return nil, `found an empty set "()"; expected at least one value, as in "(<v1>,<v2>)"`
	}
	values := make([]string, 0, strings.Count(body, ",")+1)
	for v := range strings.SplitSeq(body, ",") {
		if v == "" {
			return nil, `found an empty value in the set; expected "(<v1>,<v2>)" with non-empty values`
		}
		if check != nil {
			if reason := check(v); reason != "" {
				return nil, reason
			}
		}
		values = append(values, v)
	}
	slices.Sort(values)
	return slices.Compact(values), ""
}

func validateLabelSetValue(v string) string {
	if err := object.ValidateLabelValue(v); err != nil {
		return labelValueReason(v, err)
	}
	return ""
}

// labelValueReason explains a refused label value, with a hint for the two
// mistakes clients carry over from other selector syntaxes.
func labelValueReason(v string, err error) string {
	reason := "invalid value " + strconv.Quote(v) + ": " + err.Error()
	switch {
	case v[0] == '=':
		reason += `; found a second "=", expected one "=" or "!=" between key and value`
	case v[0] == '(' && strings.IndexByte(v, ')') < 0:
		reason += `; found "(" with no closing ")", expected "(<v1>,<v2>)"`
	case strings.IndexByte(v, ',') >= 0:
		reason += "; each parameter value is one term: repeat " + LabelParam + " to AND several terms"
	}
	return reason
}

// isFieldPath reports whether s is a dotted path of non-empty segments made
// of [A-Za-z0-9_-].
func isFieldPath(s string) bool {
	if s == "" {
		return false
	}
	segStart := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if segStart {
				return false
			}
			segStart = true
			continue
		case c-'a' < 26, c-'A' < 26, c-'0' < 10, c == '_', c == '-':
		default:
			return false
		}
		segStart = false
	}
	return !segStart
}
