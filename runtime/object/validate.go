package object

import (
	"strconv"
	"strings"
)

// ValidateMetadata checks the client-settable metadata of m against the
// syntax rules (CONTRACT §2) and appends every violation to errs. An empty
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
		// The generated name is generateName plus 8 characters, which must
		// still be a valid name.
		if err := ValidateName(strings.TrimRight(m.GenerateName, "-") + "-aaaaaaaa"); err != nil || len(m.GenerateName)+8 > 253 {
			errs.Add("metadata.generateName", "must be a valid name prefix (lower case alphanumerics or '-', starting with an alphanumeric, at most 245 characters)")
		}
	}
	for k, v := range m.Labels {
		if err := ValidateLabelKey(k); err != nil {
			errs.Add("metadata.labels["+k+"]", "invalid key: %s", err)
		}
		if err := ValidateLabelValue(v); err != nil {
			errs.Add("metadata.labels["+k+"]", "invalid value: %s", err)
		}
	}
	for k := range m.Annotations {
		if err := ValidateLabelKey(k); err != nil {
			errs.Add("metadata.annotations["+k+"]", "invalid key: %s", err)
		}
	}
	for i, f := range m.Finalizers {
		if err := ValidateFinalizer(f); err != nil {
			errs.Add("metadata.finalizers["+strconv.Itoa(i)+"]", "%s", err)
		}
	}
}
