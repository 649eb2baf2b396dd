package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseOutput(t *testing.T) {
	for _, c := range []struct {
		name string
		out  string
		want status
	}{
		{"pass", `fuzz: elapsed: 0s, gathering baseline coverage: 0/24 completed
fuzz: elapsed: 0s, gathering baseline coverage: 24/24 completed, now fuzzing with 2 workers
fuzz: elapsed: 3s, execs: 22438 (7472/sec), new interesting: 18 (total: 42)
fuzz: elapsed: 6s, execs: 40001 (5800/sec), new interesting: 21 (total: 45)
PASS
ok  	github.com/svcrun/svc/runtime/object	6.376s
`, status{Elapsed: "6s", Execs: 40001, Interesting: 21}},
		{"stalled", `fuzz: elapsed: 2s, gathering baseline coverage: 9/9 completed, now fuzzing with 2 workers
fuzz: elapsed: 3s, execs: 12 (4/sec), new interesting: 0 (total: 9)
fuzz: elapsed: 6s, execs: 12 (0/sec), new interesting: 0 (total: 9)
fuzz: elapsed: 1m0s, execs: 12 (0/sec), new interesting: 0 (total: 9)
fuzz: elapsed: 1m1s, execs: 12 (0/sec), new interesting: 0 (total: 9)
PASS
`, status{Elapsed: "1m1s", Execs: 12, Stalled: 58 * time.Second}},
		{"crash", `fuzz: elapsed: 0s, gathering baseline coverage: 1/1 completed, now fuzzing with 2 workers
fuzz: elapsed: 0s, execs: 12 (300/sec), new interesting: 0 (total: 1)
--- FAIL: FuzzBad (0.04s)
    --- FAIL: FuzzBad (0.00s)
        testing.go:1591: panic: long input

    Failing input written to testdata/fuzz/FuzzBad/771e938e4458e983
    To re-run:
    go test -run=FuzzBad/771e938e4458e983
FAIL
`, status{Elapsed: "0s", Execs: 12, Input: "testdata/fuzz/FuzzBad/771e938e4458e983"}},
		{"seed", `--- FAIL: FuzzSeed (0.00s)
    --- FAIL: FuzzSeed/seed#0 (0.00s)
        x_test.go:9: boom
FAIL
exit status 1
FAIL	example.com/fz	0.005s
fuzz: elapsed: 0s, gathering baseline coverage: 0/1 completed
failure while testing seed corpus entry: FuzzSeed/seed#0
`, status{Execs: -1, Reason: "seed corpus entry FuzzSeed/seed#0"}},
		{"build", "# example.com/fz [example.com/fz.test]\n./x_test.go:3:1: syntax error\nFAIL\texample.com/fz [build failed]\n",
			status{Execs: -1, Reason: "build failed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := parseOutput([]byte(c.out)); got != c.want {
				t.Errorf("parseOutput = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestRunAllKeepsGoingAfterAFailure fuzzes a throwaway module with a
// target that crashes on any input longer than 3 bytes, followed by one
// that never fails: the second still runs, the crasher's input file is
// reported and exists, and the run as a whole fails.
func TestRunAllKeepsGoingAfterAFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and fuzzes a module")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/fz\n\ngo 1.22\n")
	write("fz.go", "package fz\n")
	write("fz_test.go", `package fz

import "testing"

func FuzzBad(f *testing.F) {
	f.Add("ab")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 3 {
			panic("long input")
		}
	})
}

func FuzzGood(f *testing.F) {
	f.Add("ab")
	f.Fuzz(func(t *testing.T, s string) {})
}
`)
	var stdout, stderr bytes.Buffer
	opts := options{Go: "go", FuzzTime: "2000x", Parallel: 1, LogDir: t.TempDir(), Dir: dir}
	res, err := runAll(opts, []string{"./..."}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 targets failed") {
		t.Fatalf("runAll error = %v, want 1 of 2 failed\n%s", err, stderr.String())
	}
	if len(res) != 2 || res[0].Name != "FuzzBad" || res[1].Name != "FuzzGood" {
		t.Fatalf("outcomes %+v, want FuzzBad then FuzzGood", res)
	}
	bad, good := res[0], res[1]
	if !bad.Failed || !strings.HasPrefix(bad.Input, "testdata/fuzz/FuzzBad/") {
		t.Errorf("FuzzBad: failed %v, input %q", bad.Failed, bad.Input)
	} else if _, err := os.Stat(filepath.Join(dir, bad.Input)); err != nil {
		t.Errorf("reported input does not exist: %v", err)
	}
	if good.Failed || good.Execs <= 0 {
		t.Errorf("FuzzGood: failed %v (%s), %d execs; want ok with executions", good.Failed, good.Reason, good.Execs)
	}
	table := stdout.String()
	for _, want := range []string{"PACKAGE", "FAILED " + bad.Input, "FuzzGood", " ok"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
