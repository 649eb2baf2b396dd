// Package selector holds the grammar of list selectors (docs/api.md): it
// parses the values of the labelSelector and fieldSelector query parameters
// into Requirements, prints them back in canonical form, and matches label
// requirements against an object's labels.
//
// # Grammar
//
// Each parameter value is exactly one term; a client repeats the parameter to
// give several terms, and all of them are ANDed. Terms are not comma-separated
// lists: "a=b,c" is the single label term a=b,c (malformed, since ',' cannot
// appear in a label value) or the single field term a = "b,c". Surrounding
// white space of a term is trimmed; an empty term selects everything, as if
// the parameter were absent.
//
// Label terms (key: object.ValidateLabelKey, value: object.ValidateLabelValue,
// which allows the empty value; set elements are non-empty):
//
//	k=v         Equals        k is present with value v ("k=": with value "")
//	k!=v        NotEquals     k is absent, or present with another value
//	k=(v1,v2)   In            k is present with one of the values
//	k!=(v1,v2)  NotIn         k is absent, or present with none of the values
//	k           Exists        k is present, whatever its value
//	!k          DoesNotExist  k is absent
//
// Field terms (key: a dotted path of segments [A-Za-z0-9_-]+ such as
// "spec.age"; the bare key "name" means "metadata.name"; values are any
// non-empty strings):
//
//	f=v         Equals
//	f!=v        NotEquals
//	f=(v1,v2)   In
//	f!=(v1,v2)  NotIn
//	f<v         LessThan
//	f<=v        LessOrEqual
//	f>v         GreaterThan
//	f>=v        GreaterOrEqual
//
// Fields have no exists or does-not-exist form, and labels no range form.
// The first "=", "<" or ">" of a field term starts its operator ("!=" when
// a "!" comes before the "=", "<=" or ">=" when an "=" follows the "<" or
// ">"), and the rest is the value, so a field value may itself contain
// "=", "<", ">", "!=", "@" or spaces ("a==b" is the field term a = "=b",
// "a>=>b" is a >= ">b"). A value that starts with "(" and ends with ")" is
// a set: its inside is split on ",", every element must be non-empty, and
// the set must not be empty. Range terms take one value, never a set.
// Parsed sets are sorted and free of duplicates, so Requirement.String is
// canonical and parses back to an equal Requirement.
//
// # Matching
//
// Requirement.Matches and Selector.Matches implement label semantics, where a
// NotEquals or NotIn requirement matches an object that lacks the key. Field
// semantics differ: an object with no value for the field is excluded by
// every field term, including != (docs/api.md). The query engine applies that
// rule itself, before it calls Matches or when it reads an index. Range
// terms compare values in the order of the field's type (numbers as
// numbers, date-times as instants), which only the query engine knows: it
// compares and asks Operator.Holds, and Matches is false for them.
//
// # What it does not do
//
// There is no index planning here and no knowledge of models: whether a field
// is indexed, and which index answers a requirement, is decided by
// runtime/query, which reads the Requirements (Key, Op, Values) of a
// Selector. Parse errors are *Error values; the HTTP layer (runtime/api)
// turns them into 400 responses, and runtime/query calls ParseLabels and
// ParseFields with the repeated query parameter values.
package selector
