package codec

import (
	"bytes"
	"fmt"
)

// MaxDepth is how deeply a request body may nest JSON objects and arrays.
// Objects served here nest a few levels (envelope, spec, a list of
// objects); the patch library re-reads a value at every level it
// descends, so a deeper body costs memory and CPU quadratic in its depth
// before it could be refused (docs/operations.md).
const MaxDepth = 100

// LimitError is input refused because it, or what it would build, exceeds
// a size limit: the HTTP layer answers 413. Limit names the limit.
type LimitError struct {
	Limit  string
	Max    int64
	Detail string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s (limit %s = %d)", e.Detail, e.Limit, e.Max)
}

// CheckDepth refuses data that nests objects and arrays deeper than
// MaxDepth. It is one pass over the bytes with no allocation, so it can
// run on every body before any decoding; it does not check the syntax
// (the decode that follows does).
func CheckDepth(data []byte) error {
	_, err := scan(data)
	return err
}

// scan checks data's depth (CheckDepth) and counts the commas between
// the elements of the outermost array or object, so that a JSON Patch's
// operations are counted before any is decoded (one fewer than there are).
func scan(data []byte) (commas int, err error) {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// To the closing quote: one not escaped by an odd run of
			// backslashes. IndexByte makes long strings cheap.
			j := i + 1
			for {
				k := bytes.IndexByte(data[j:], '"')
				if k < 0 {
					return commas, nil // unterminated: the decoder says so
				}
				j += k
				n := 0
				for p := j - 1; p > i && data[p] == '\\'; p-- {
					n++
				}
				if n%2 == 0 {
					break
				}
				j++
			}
			i = j
		case '{', '[':
			if depth++; depth > MaxDepth {
				return 0, &Error{Detail: fmt.Sprintf("the JSON nests objects and arrays deeper than %d levels (at byte %d; limit MaxDepth)", MaxDepth, i)}
			}
		case '}', ']':
			depth--
		case ',':
			if depth == 1 {
				commas++
			}
		}
	}
	return commas, nil
}
