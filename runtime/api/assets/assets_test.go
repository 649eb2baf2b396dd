package assets

import "testing"

func TestAcceptsGzip(t *testing.T) {
	cases := map[string]bool{
		"":                    false,
		"gzip":                true,
		"GZIP":                true,
		"deflate, gzip":       true,
		"gzip;q=0":            false,
		"gzip; q=0.000":       false,
		"gzip;q=0.5":          true,
		"br":                  false,
		"*":                   true,
		"*;q=0":               false,
		"gzip;q=0, *":         false,
		"identity, *;q=1":     true,
		"x-gzip":              true,
		"br;q=1.0, gzip;q=.1": true,
	}
	for v, want := range cases {
		var vals []string
		if v != "" {
			vals = []string{v}
		}
		if got := acceptsGzip(vals); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", v, got, want)
		}
	}
}
