// Command fuzzall runs every fuzz target of the module, one after the
// other, for a fixed time each, and prints a table of what each found:
// package, target, time, executions, new interesting inputs and the
// result. A failing target does not stop the others; the exit status is 1
// when any failed. It needs nothing but the go command.
//
//	go run ./tools/fuzzall -fuzztime 10s
//	go run ./tools/fuzzall -fuzztime 10m -run 'Selector|Name' ./runtime/...
//
// Targets are found by reading the test files that `go list` reports for
// each package, not by `go test -list`, which would compile every test
// binary of the module just to list a few names.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// target is one fuzz function of one package.
type target struct {
	Pkg  string // import path
	Dir  string // package directory
	Rel  string // directory relative to the module root, for the table
	Name string // FuzzXxx
}

// outcome is what one run of a target found.
type outcome struct {
	target
	Wall        time.Duration
	Elapsed     string // the fuzzer's own last "elapsed" figure
	Execs       int64  // -1 when the fuzzer never reported any
	Interesting int64  // new interesting inputs found in this run
	Stalled     time.Duration
	Failed      bool
	Input       string // failing input, relative to the module root
	Reason      string // why it failed, when no input file says it
	Log         string // file holding the full output
}

func main() {
	fuzztime := flag.String("fuzztime", "10s", "time (or Nx executions) per target, as go test -fuzztime takes it")
	run := flag.String("run", "", "only targets whose name matches this regular expression")
	parallel := flag.Int("parallel", 0, "fuzzing workers per target (go test -parallel; 0: GOMAXPROCS)")
	goCmd := flag.String("go", "go", "go command")
	logDir := flag.String("logdir", "", "directory for each target's full output (default: a new temporary directory)")
	verbose := flag.Bool("v", false, "copy each target's output to stderr as it runs")
	list := flag.Bool("list", false, "only list the targets")
	minimize := flag.String("minimizetime", "", "time (or Nx) the fuzzer may spend minimizing each new input (go test -fuzzminimizetime; empty: go's default, 60s)")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	opts := options{Go: *goCmd, FuzzTime: *fuzztime, Run: *run, Parallel: *parallel, LogDir: *logDir, Verbose: *verbose, List: *list, MinimizeTime: *minimize}
	if _, err := runAll(opts, patterns, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fuzzall:", err)
		os.Exit(1)
	}
}

// options are the command line's flags.
type options struct {
	Go, FuzzTime, Run, LogDir string
	MinimizeTime              string
	Parallel                  int
	Verbose, List             bool
	Dir                       string // where to run the go command; "" for the current directory
}

// runAll fuzzes every target of the packages matching patterns in turn,
// prints the table to stdout and returns the outcomes; the error says how
// many failed.
func runAll(o options, patterns []string, stdout, stderr io.Writer) ([]outcome, error) {
	var filter *regexp.Regexp
	if o.Run != "" {
		var err error
		if filter, err = regexp.Compile(o.Run); err != nil {
			return nil, fmt.Errorf("-run: %w", err)
		}
	}
	timeout, err := testTimeout(o.FuzzTime)
	if err != nil {
		return nil, err
	}
	root, err := moduleRoot(o)
	if err != nil {
		return nil, err
	}
	targets, err := findTargets(o, patterns, stderr)
	if err != nil {
		return nil, err
	}
	if filter != nil {
		kept := targets[:0]
		for _, t := range targets {
			if filter.MatchString(t.Name) {
				kept = append(kept, t)
			}
		}
		targets = kept
	}
	if len(targets) == 0 {
		return nil, errors.New("no fuzz targets found")
	}
	for i, t := range targets {
		if rel, err := filepath.Rel(root, t.Dir); err == nil {
			targets[i].Rel = "./" + filepath.ToSlash(rel)
		}
	}
	if o.List {
		for _, t := range targets {
			fmt.Fprintf(stdout, "%s\t%s\n", t.Rel, t.Name)
		}
		return nil, nil
	}
	if o.LogDir == "" {
		if o.LogDir, err = os.MkdirTemp("", "fuzzall-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "fuzzall: %d targets, %s each, logs in %s\n", len(targets), o.FuzzTime, o.LogDir)
	var results []outcome
	failed := 0
	for i, t := range targets {
		fmt.Fprintf(stderr, "fuzzall: [%d/%d] %s %s\n", i+1, len(targets), t.Pkg, t.Name)
		res := fuzzOne(o, root, t, timeout, stderr)
		if res.Failed {
			failed++
			fmt.Fprintf(stderr, "fuzzall: %s %s %s\n", t.Pkg, t.Name, res.result())
		}
		results = append(results, res)
	}
	printTable(stdout, results)
	if failed > 0 {
		return results, fmt.Errorf("%d of %d targets failed", failed, len(results))
	}
	return results, nil
}

// testTimeout gives go test's -timeout room for building and for the
// baseline pass over the corpus beyond the fuzzing time itself.
func testTimeout(fuzztime string) (time.Duration, error) {
	if strings.HasSuffix(fuzztime, "x") {
		if _, err := strconv.ParseInt(strings.TrimSuffix(fuzztime, "x"), 10, 64); err != nil {
			return 0, fmt.Errorf("-fuzztime %q: %w", fuzztime, err)
		}
		return time.Hour, nil
	}
	d, err := time.ParseDuration(fuzztime)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("-fuzztime %q: want a positive duration or a count such as 1000x", fuzztime)
	}
	return d + d/2 + 10*time.Minute, nil
}

func moduleRoot(o options) (string, error) {
	cmd := exec.Command(o.Go, "env", "GOMOD")
	cmd.Dir = o.Dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside a module")
	}
	return filepath.Dir(mod), nil
}

// findTargets lists the packages matching patterns and reads their test
// files for fuzz targets, in package then file order.
func findTargets(o options, patterns []string, stderr io.Writer) ([]target, error) {
	args := append([]string{"list", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles"}, patterns...)
	cmd := exec.Command(o.Go, args...)
	cmd.Dir = o.Dir
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", strings.Join(patterns, " "), err)
	}
	var targets []target
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir           string
			TestGoFiles, XTestGoFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		for _, f := range append(p.TestGoFiles, p.XTestGoFiles...) {
			names, err := fuzzFuncs(filepath.Join(p.Dir, f))
			if err != nil {
				return nil, err
			}
			for _, name := range names {
				targets = append(targets, target{Pkg: p.ImportPath, Dir: p.Dir, Name: name})
			}
		}
	}
	return targets, nil
}

// fuzzFuncs returns the fuzz targets declared in a test file: top-level
// functions FuzzXxx(*testing.F), as go test finds them. Parsing rather
// than matching lines skips source held in strings and comments.
func fuzzFuncs(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("read fuzz targets: %w", err)
	}
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || len(fn.Type.Params.List) != 1 {
			continue
		}
		star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "F" {
			names = append(names, fn.Name.Name)
		}
	}
	return names, nil
}

// fuzzOne runs one target and reads its output.
func fuzzOne(opts options, root string, t target, timeout time.Duration, stderr io.Writer) outcome {
	o := outcome{target: t, Execs: -1}
	o.Log = filepath.Join(opts.LogDir, strings.NewReplacer("/", "_", ".", "_").Replace(t.Pkg)+"."+t.Name+".log")
	args := []string{"test", "-run", "^$", "-fuzz", "^" + regexp.QuoteMeta(t.Name) + "$",
		"-fuzztime", opts.FuzzTime, "-timeout", timeout.String()}
	if opts.MinimizeTime != "" {
		args = append(args, "-fuzzminimizetime", opts.MinimizeTime)
	}
	if opts.Parallel > 0 {
		args = append(args, "-parallel", strconv.Itoa(opts.Parallel))
	}
	args = append(args, t.Pkg)
	var buf bytes.Buffer
	var w io.Writer = &buf
	if opts.Verbose {
		w = io.MultiWriter(&buf, stderr)
	}
	cmd := exec.Command(opts.Go, args...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	runErr := cmd.Run()
	o.Wall = time.Since(start)
	if err := os.WriteFile(o.Log, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintln(stderr, "fuzzall: write log:", err)
	}
	st := parseOutput(buf.Bytes())
	o.Elapsed, o.Execs, o.Interesting, o.Stalled = st.Elapsed, st.Execs, st.Interesting, st.Stalled
	if runErr != nil {
		o.Failed = true
		switch {
		case st.Input != "":
			if rel, err := filepath.Rel(root, filepath.Join(t.Dir, st.Input)); err == nil {
				o.Input = rel
			} else {
				o.Input = st.Input
			}
		case st.Reason != "":
			o.Reason = st.Reason
		default:
			o.Reason = runErr.Error()
		}
	}
	return o
}

// status is what parseOutput reads from go test -fuzz output.
type status struct {
	Elapsed     string
	Execs       int64 // -1 when no progress line was printed
	Interesting int64
	// Stalled is how long the execution count stood still at the end. The
	// count does not move while a worker minimizes a new input (up to
	// -fuzzminimizetime) or while it hangs: the fuzzer has no per-input
	// timeout, so a hanging input shows only here.
	Stalled time.Duration
	Input   string // failing input as printed, relative to the package
	Reason  string // a failure without an input file
}

var (
	// fuzz: elapsed: 3s, execs: 24015 (8004/sec), new interesting: 2 (total: 40)
	progressLine = regexp.MustCompile(`^fuzz: elapsed: (\S+), execs: (\d+) \([^)]*\), new interesting: (\d+)`)
	// Failing input written to testdata/fuzz/FuzzX/5b2a...
	inputLine = regexp.MustCompile(`Failing input written to (\S+)`)
	// failure while testing seed corpus entry: FuzzX/seed#0
	seedLine = regexp.MustCompile(`failure while testing seed corpus entry: (\S+)`)
)

// parseOutput reads the last progress line and any failure of a go test
// -fuzz run. Progress lines are cumulative, so the last one holds the
// totals.
func parseOutput(out []byte) status {
	st := status{Execs: -1}
	var grewAt time.Duration // elapsed when the count last grew
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := progressLine.FindStringSubmatch(line); m != nil {
			execs, _ := strconv.ParseInt(m[2], 10, 64)
			elapsed, _ := time.ParseDuration(m[1])
			if execs > st.Execs {
				grewAt = elapsed
			}
			st.Elapsed, st.Execs, st.Stalled = m[1], execs, elapsed-grewAt
			st.Interesting, _ = strconv.ParseInt(m[3], 10, 64)
			continue
		}
		if m := inputLine.FindStringSubmatch(line); m != nil {
			st.Input = m[1]
			continue
		}
		if m := seedLine.FindStringSubmatch(line); m != nil && st.Reason == "" {
			st.Reason = "seed corpus entry " + m[1]
			continue
		}
		if st.Reason == "" && (strings.HasPrefix(line, "# ") || strings.Contains(line, "[build failed]") || strings.Contains(line, "[setup failed]")) {
			st.Reason = "build failed"
		}
	}
	return st
}

// stallWarn is how long the execution count may stand still before the
// table says so. The fuzzer prints progress every 3 s.
const stallWarn = 30 * time.Second

// result is the table's last column.
func (o outcome) result() string {
	switch {
	case !o.Failed && o.Stalled >= stallWarn:
		return fmt.Sprintf("ok, but no execution counted in its last %s (minimizing, or a hanging input)", o.Stalled)
	case !o.Failed:
		return "ok"
	case o.Input != "":
		return "FAILED " + o.Input
	default:
		return "FAILED (" + o.Reason + "; log " + o.Log + ")"
	}
}

func printTable(w io.Writer, results []outcome) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tTARGET\tTIME\tEXECS\tNEW\tRESULT")
	for _, o := range results {
		pkg := o.Rel
		if pkg == "" {
			pkg = o.Pkg
		}
		execs := "-"
		if o.Execs >= 0 {
			execs = strconv.FormatInt(o.Execs, 10)
		}
		elapsed := o.Wall.Round(time.Second).String()
		if o.Elapsed != "" {
			elapsed = o.Elapsed + " (" + elapsed + " wall)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", pkg, o.Name, elapsed, execs, o.Interesting, o.result())
	}
	tw.Flush()
}
