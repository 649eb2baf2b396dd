package object

import (
	"maps"
	"slices"
	"strconv"
)

// generatedSuffixSample stands for the 8 random characters the store
// appends to metadata.generateName; any 8 lower case alphanumerics are
// equivalent for validation.
const generatedSuffixSample = "aaaaaaaa"

// ValidateMetadata checks the client-settable metadata of m against the
// syntax rules (docs/api.md) and appends every violation to errs. An empty
// name is allowed when generateName is set; the store fills the name in.
func ValidateMetadata(m *Metadata, errs *FieldErrors) {
	switch {
	case m.Name != "":
		if err := ValidateName(m.Name); err != nil {
			errs.Add("metadata.name", "%s", err)
		}
	case m.GenerateName == "":
		errs.Add("metadata.name", "is required (or set metadata.generateName)")
	default:
		// The generated name is generateName plus 8 random lower case
		// alphanumerics, so generateName is a valid prefix exactly when
		// generateName + "aaaaaaaa" is a valid name; that also caps it at
		// 245 characters.
		if err := ValidateName(m.GenerateName + generatedSuffixSample); err != nil {
			errs.Add("metadata.generateName", "must be a valid name prefix (lower case alphanumerics or '-', starting with an alphanumeric, at most 245 characters)")
		}
	}
	// Maps are walked in key order so that the violations, and so the
	// error response, are the same on every run; valid ones, the common
	// case on every write, are not sorted.
	if validLabels(m.Labels, m.Annotations) {
		m.validateFinalizers(errs)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		if err := ValidateLabelKey(k); err != nil {
			errs.Add("metadata.labels["+k+"]", "invalid key: %s", err)
		}
		if err := ValidateLabelValue(m.Labels[k]); err != nil {
			errs.Add("metadata.labels["+k+"]", "invalid value: %s", err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Annotations)) {
		if err := ValidateLabelKey(k); err != nil {
			errs.Add("metadata.annotations["+k+"]", "invalid key: %s", err)
		}
	}
	m.validateFinalizers(errs)
}

func (m *Metadata) validateFinalizers(errs *FieldErrors) {
	for i, f := range m.Finalizers {
		if err := ValidateFinalizer(f); err != nil {
			errs.Add("metadata.finalizers["+strconv.Itoa(i)+"]", "%s", err)
		}
	}
}

// validLabels reports whether every label and annotation key, and every
// label value, is valid.
func validLabels(labels, annotations map[string]string) bool {
	for k, v := range labels {
		if ValidateLabelKey(k) != nil || ValidateLabelValue(v) != nil {
			return false
		}
	}
	for k := range annotations {
		if ValidateLabelKey(k) != nil {
			return false
		}
	}
	return true
}
