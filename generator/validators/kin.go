package validators

import (
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// KinFormats are the string formats the generated validators support, as
// kin-openapi format validators. They are written independently of the
// generated checks (which use no regexps and no allocation), so that
// kin-openapi can serve as the oracle the generated code is tested
// against; anyone validating a model with kin-openapi should use them
// too (see KinOptions), since kin-openapi checks no email, uri or uuid
// format by default and its date-time lets through what Go's time.Time
// cannot read.
func KinFormats() map[string]openapi3.StringFormatValidator {
	dateTime := regexp.MustCompile(openapi3.FormatOfStringDateTime)
	return map[string]openapi3.StringFormatValidator{
		"email": openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail),
		"date":  openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringDate),
		"uuid":  openapi3.NewRegexpFormatValidator(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`),
		"uri": openapi3.NewCallbackValidator(func(s string) error {
			u, err := url.Parse(s)
			if err != nil {
				return err
			}
			if u.Scheme == "" {
				return errors.New("not an absolute URI")
			}
			return nil
		}),
		// RFC 3339 as kin-openapi's pattern has it, restricted to what
		// time.Time decodes and encodes again: no leap second, no
		// 31 April, an offset of at most 23:59.
		"date-time": openapi3.NewCallbackValidator(func(s string) error {
			if !dateTime.MatchString(s) {
				return errors.New("not an RFC 3339 date-time")
			}
			var t time.Time
			q, _ := json.Marshal(s)
			if err := t.UnmarshalJSON(q); err != nil {
				return err
			}
			if s[len(s)-1] != 'Z' {
				hh, mm, _ := strings.Cut(s[len(s)-5:], ":")
				if hh > "23" || mm > "59" {
					return errors.New("UTC offset out of range")
				}
			}
			return nil
		}),
	}
}

// KinOptions are the kin-openapi options under which
// FullSchema(...).VisitJSON(doc, KinOptions()...) accepts exactly the
// documents the generated ValidateKJSON accepts: all errors, format
// validation on, and the formats of KinFormats.
func KinOptions() []openapi3.SchemaValidationOption {
	return []openapi3.SchemaValidationOption{
		openapi3.MultiErrors(),
		openapi3.EnableFormatValidation(),
		openapi3.WithStringFormatValidators(KinFormats()),
	}
}
