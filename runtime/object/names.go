package object

import (
	"errors"
	"strings"
)

// Length limits of the name and label rules (docs/api.md). Unexported names
// in this file carry a "rule" prefix so they stay clear of the rest of the
// package.
const (
	ruleMaxName          = 253 // metadata.name
	ruleMaxSubdomain     = 253 // DNS-1123 subdomain, and so a label key prefix
	ruleMaxQualifiedName = 63  // name part of a label key
	ruleMaxLabelValue    = 63
)

// The validators below run on every write, so they are hand-written byte
// loops that never allocate: not on valid input, and not on invalid input
// either, because every message is a prebuilt error. Messages describe the
// rule and never repeat the input; callers add the field path and the value.
var (
	errRuleEmpty      = errors.New("must not be empty")
	errRuleTooLong63  = errors.New("must be no more than 63 characters")
	errRuleTooLong253 = errors.New("must be no more than 253 characters")

	errRuleNameChars = errors.New("must consist of lower case alphanumeric characters or '-', " +
		"and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')")

	errRuleSubdomainChars = errors.New(ruleSubdomainText)
	errRuleQNameChars     = errors.New(ruleQualifiedText)

	errRuleKeySlashes = errors.New("must be a name with an optional DNS subdomain prefix and one '/' " +
		"(e.g. 'MyName' or 'example.com/MyName'); found more than one '/'")
	errRulePrefixEmpty    = errors.New("prefix part must not be empty when '/' is present (e.g. 'example.com/MyName')")
	errRulePrefixTooLong  = errors.New("prefix part must be no more than 253 characters")
	errRulePrefixChars    = errors.New("prefix part " + ruleSubdomainText)
	errRuleKeyNameEmpty   = errors.New("name part must not be empty")
	errRuleKeyNameTooLong = errors.New("name part must be no more than 63 characters")
	errRuleKeyNameChars   = errors.New("name part " + ruleQualifiedText)

	errRuleValueChars = errors.New("must be empty or consist of alphanumeric characters, '-', '_' or '.', " +
		"and must start and end with an alphanumeric character (e.g. 'MyValue', 'my_value', or '12345')")
)

const (
	ruleSubdomainText = "must consist of lower case alphanumeric characters, '-' or '.', and each " +
		"'.'-separated part must start and end with an alphanumeric character (e.g. 'example.com')"
	ruleQualifiedText = "must consist of alphanumeric characters, '-', '_' or '.', and must start " +
		"and end with an alphanumeric character (e.g. 'MyName', 'my.name', or '123-abc')"
)

// ValidateName checks metadata.name: at most 253 characters of [a-z0-9-],
// starting and ending with [a-z0-9]. It returns nil when name is valid.
func ValidateName(name string) error {
	n := len(name)
	if n == 0 {
		return errRuleEmpty
	}
	if n > ruleMaxName {
		return errRuleTooLong253
	}
	if !ruleIsLowerAlnum(name[0]) || !ruleIsLowerAlnum(name[n-1]) {
		return errRuleNameChars
	}
	for i := 1; i < n-1; i++ {
		if c := name[i]; !ruleIsLowerAlnum(c) && c != '-' {
			return errRuleNameChars
		}
	}
	return nil
}

// ValidateDNSLabel checks a DNS-1123 label: a name (ValidateName) of at
// most 63 characters. Plugin names are labels.
func ValidateDNSLabel(s string) error {
	if len(s) > ruleMaxQualifiedName {
		return errRuleTooLong63
	}
	return ValidateName(s)
}

// ValidateDNSSubdomain checks a DNS-1123 subdomain as Kubernetes defines it:
// at most 253 characters of lower case alphanumerics, '-' and '.', where every
// '.'-separated part is non-empty and starts and ends with an alphanumeric
// character. It returns nil when s is valid.
func ValidateDNSSubdomain(s string) error {
	switch {
	case len(s) == 0:
		return errRuleEmpty
	case len(s) > ruleMaxSubdomain:
		return errRuleTooLong253
	case !ruleIsSubdomain(s):
		return errRuleSubdomainChars
	}
	return nil
}

// ValidateQualifiedNamePart checks the name part of a label key (what follows
// the optional "prefix/"): 1 to 63 characters of [A-Za-z0-9_.-], starting and
// ending with an alphanumeric character. It returns nil when s is valid.
func ValidateQualifiedNamePart(s string) error {
	switch {
	case len(s) == 0:
		return errRuleEmpty
	case len(s) > ruleMaxQualifiedName:
		return errRuleTooLong63
	case !ruleIsQualified(s):
		return errRuleQNameChars
	}
	return nil
}

// ValidateLabelKey checks a label key of the form "[prefix/]name". The
// optional prefix is a DNS-1123 subdomain of at most 253 characters and must
// not be empty when the '/' is present; the name follows
// ValidateQualifiedNamePart. At most one '/' is allowed. It returns nil when
// key is valid.
//
// Only syntax is checked here; whether a plugin may use a key (reserved
// prefixes, unprefixed keys) is decided by the extension loader.
func ValidateLabelKey(key string) error {
	name := key
	if slash := strings.IndexByte(key, '/'); slash >= 0 {
		if strings.IndexByte(key[slash+1:], '/') >= 0 {
			return errRuleKeySlashes
		}
		prefix := key[:slash]
		name = key[slash+1:]
		switch {
		case len(prefix) == 0:
			return errRulePrefixEmpty
		case len(prefix) > ruleMaxSubdomain:
			return errRulePrefixTooLong
		case !ruleIsSubdomain(prefix):
			return errRulePrefixChars
		}
	}
	switch {
	case len(name) == 0:
		return errRuleKeyNameEmpty
	case len(name) > ruleMaxQualifiedName:
		return errRuleKeyNameTooLong
	case !ruleIsQualified(name):
		return errRuleKeyNameChars
	}
	return nil
}

// ValidateLabelValue checks a label value by Kubernetes' rule: either empty,
// or at most 63 characters of [A-Za-z0-9_.-] starting and ending with an
// alphanumeric character. It returns nil when v is valid.
func ValidateLabelValue(v string) error {
	switch {
	case len(v) == 0:
		return nil
	case len(v) > ruleMaxLabelValue:
		return errRuleTooLong63
	case !ruleIsQualified(v):
		return errRuleValueChars
	}
	return nil
}

// ValidateFinalizer checks one entry of metadata.finalizers. A finalizer is a
// qualified name with an optional DNS subdomain prefix, the same rule as
// ValidateLabelKey (e.g. "example.com/cleanup"). It returns nil when f is
// valid.
func ValidateFinalizer(f string) error {
	return ValidateLabelKey(f)
}

// ruleIsSubdomain reports whether the non-empty s is made of '.'-separated
// parts, each a non-empty run of [a-z0-9-] that starts and ends with [a-z0-9].
// The length is checked by the caller.
func ruleIsSubdomain(s string) bool {
	// prev is the byte before the current one, with '.' standing in for the
	// start of the string: a part may neither start nor end with '-' or '.'.
	prev := byte('.')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case ruleIsLowerAlnum(c):
		case c == '-':
			if prev == '.' {
				return false
			}
		case c == '.':
			if prev == '.' || prev == '-' {
				return false
			}
		default:
			return false
		}
		prev = c
	}
	return ruleIsLowerAlnum(prev)
}

// ruleIsQualified reports whether the non-empty s is made of [A-Za-z0-9_.-]
// and starts and ends with an alphanumeric character. The length is checked
// by the caller.
func ruleIsQualified(s string) bool {
	n := len(s)
	if !ruleIsAlnum(s[0]) || !ruleIsAlnum(s[n-1]) {
		return false
	}
	for i := 1; i < n-1; i++ {
		if c := s[i]; !ruleIsAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func ruleIsLowerAlnum(c byte) bool {
	return c-'a' < 26 || c-'0' < 10
}

func ruleIsAlnum(c byte) bool {
	return c-'a' < 26 || c-'A' < 26 || c-'0' < 10
}
