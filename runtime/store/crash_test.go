package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/store"
	"github.com/svcrun/svc/runtime/store/storetest"
)

// Small log segments and snapshot threshold, so that kills also land in
// the middle of segment cuts, snapshots and log truncation.
var crashOpts = store.Options{SnapshotBytes: 192 << 10, SegmentBytes: 48 << 10}

const crashChildEnv = "SVC_STORE_CRASH_CHILD"

// crashParams are the crash test's knobs, from the environment (`make
// crash` sets them); the defaults are the short run of `make test`.
type crashParams struct {
	// Rounds of write, kill and check (SVC_STORE_CRASH_ROUNDS).
	Rounds int
	// Sizes in bytes of a padding annotation, one per writer in turn
	// (SVC_STORE_CRASH_SIZES, comma-separated); none by default.
	Sizes []int
	// Objects is how many names each writer cycles through, creating a
	// name the first time and updating it after, so the store stays
	// bounded however many rounds run (SVC_STORE_CRASH_OBJECTS); 0 gives
	// every write a new name, for ever-growing data.
	Objects int
}

func crashParamsFromEnv() (crashParams, error) {
	p := crashParams{Rounds: 20}
	if v := os.Getenv("SVC_STORE_CRASH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, fmt.Errorf("SVC_STORE_CRASH_ROUNDS=%q: want a positive number", v)
		}
		p.Rounds = n
	}
	if v := os.Getenv("SVC_STORE_CRASH_SIZES"); v != "" {
		p.Sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 4<<20 {
				return p, fmt.Errorf("SVC_STORE_CRASH_SIZES=%q: want sizes in bytes from 1 to 4194304", v)
			}
			p.Sizes = append(p.Sizes, n)
		}
	}
	if v := os.Getenv("SVC_STORE_CRASH_OBJECTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return p, fmt.Errorf("SVC_STORE_CRASH_OBJECTS=%q: want a number, 0 for no bound", v)
		}
		p.Objects = n
	}
	return p, nil
}

// TestCrashRecovery re-executes the test binary as a child that writes
// continuously from several goroutines and prints every acknowledged
// write, kills it with SIGKILL at a random moment, reopens the store and
// checks that every acknowledged write is there with its version. The data
// directory carries over from round to round. Rounds, object sizes and
// the number of names come from the environment (crashParams).
func TestCrashRecovery(t *testing.T) {
	params, err := crashParamsFromEnv()
	if err != nil {
		if os.Getenv(crashChildEnv) != "" {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		t.Fatal(err)
	}
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir, os.Getenv("SVC_STORE_CRASH_ROUND"), params)
		return
	}
	if testing.Short() {
		t.Skip("crash test re-executes the binary")
	}
	dir := t.TempDir()
	acked := map[string]int64{} // name -> last acknowledged version
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	total, lostTotal := 0, 0
	lastSnap, snapRounds := "", 0 // rounds after which a newer snapshot was on disk
	for round := range params.Rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashRecovery$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, "SVC_STORE_CRASH_ROUND="+strconv.Itoa(round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		// Let it write for a random while after its first acknowledgement.
		killAt := time.Duration(20+rng.IntN(180)) * time.Millisecond
		var timer <-chan time.Time
		started, n := false, 0
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				if timer == nil && !started {
					started, timer = true, time.After(killAt)
				}
				if record(t, acked, l) {
					n++
				}
			case <-timer:
				cmd.Process.Signal(syscall.SIGKILL)
				timer = nil
			}
		}
		cmd.Wait()
		total += n
		// Everything printed before the kill was acknowledged: check it.
		m := storetest.PersonModel()
		s, err := store.Open(store.Options{Dir: dir, SnapshotBytes: crashOpts.SnapshotBytes, SegmentBytes: crashOpts.SegmentBytes})
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		if err := s.Register(context.Background(), m); err != nil {
			t.Fatalf("round %d: register: %v", round, err)
		}
		present := 0
		var lost []string
		for name, v := range acked {
			rec, err := s.Get(context.Background(), m, name)
			if errors.Is(err, store.ErrNotFound) {
				lost = append(lost, fmt.Sprintf("%s v%d", name, v))
				continue
			}
			if err != nil {
				t.Fatalf("round %d: get %s: %v", round, name, err)
			}
			// The next write of that object may have become durable
			// without being acknowledged before the kill.
			if rec.Version != v && rec.Version != v+1 {
				t.Fatalf("round %d: %s has version %d, acknowledged %d", round, name, rec.Version, v)
			}
			acked[name] = rec.Version
			if p := decode(t, rec); p.Metadata.GetVersion() != rec.Version {
				t.Fatalf("round %d: %s body version %d != record version %d", round, name, p.Metadata.GetVersion(), rec.Version)
			}
			present++
		}
		s.Close()
		snap := newestSnapshot(t, dir)
		if snap != lastSnap {
			lastSnap = snap
			snapRounds++
		}
		t.Logf("round %d: %d writes acknowledged before kill at %v; objects acknowledged %d, present %d; newest snapshot %q",
			round, n, killAt, len(acked), present, snap)
		if len(lost) > 0 {
			lostTotal += len(lost)
			slices.Sort(lost)
			t.Fatalf("round %d: objects acknowledged %d, present %d: lost %d, e.g. %v", round, len(acked), present, len(lost), lost[:min(len(lost), 5)])
		}
	}
	t.Logf("crash recovery: %d rounds, padding sizes %v, %d names per writer (0: unbounded): %d writes acknowledged; objects acknowledged %d, present %d, lost %d; a new snapshot after %d rounds",
		params.Rounds, params.Sizes, params.Objects, total, len(acked), len(acked)-lostTotal, lostTotal, snapRounds)
	if total < 10*params.Rounds {
		t.Fatalf("only %d acknowledged writes in %d rounds: the child barely ran", total, params.Rounds)
	}
}

// newestSnapshot returns the name of the newest snapshot file in a store
// directory, "" when there is none. Names sort by the record they cover.
func newestSnapshot(t *testing.T, dir string) string {
	names, err := filepath.Glob(filepath.Join(dir, "snapshots", "snapshot-*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return filepath.Base(names[len(names)-1])
}

// record notes an acknowledgement line "name version".
func record(t *testing.T, acked map[string]int64, line string) bool {
	name, v, ok := strings.Cut(line, " ")
	if !ok {
		return false // other output of the test binary
	}
	ver, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return false
	}
	if ver < acked[name] {
		t.Fatalf("version of %s went back from %d to %d", name, acked[name], ver)
	}
	acked[name] = ver
	return true
}

// crashChild writes until it is killed, printing "name version" after
// each acknowledged write (create or update).
func crashChild(dir, round string, params crashParams) {
	m := storetest.PersonModel()
	s, err := store.Open(store.Options{Dir: dir, SnapshotBytes: crashOpts.SnapshotBytes, SegmentBytes: crashOpts.SegmentBytes})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	if err := s.Register(context.Background(), m); err != nil {
		fmt.Fprintln(os.Stderr, "child register:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	ack := func(name string, v int64) {
		mu.Lock()
		fmt.Fprintf(w, "%s %d\n", name, v)
		w.Flush()
		mu.Unlock()
	}
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "child %s: %v\n", what, err)
		os.Exit(2)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		var pad map[string]string
		if len(params.Sizes) > 0 {
			pad = map[string]string{"crash.example.com/pad": strings.Repeat("p", params.Sizes[g%len(params.Sizes)])}
		}
		newPerson := func(name string) *storetest.Person {
			p := storetest.NewPerson(name, storetest.PersonSpec{Name: strings.Repeat("x", 80), Tags: []string{"a", "b"}})
			p.Metadata.Labels = map[string]string{"round": round}
			p.Metadata.Annotations = pad
			return p
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; ; i++ {
				if params.Objects > 0 {
					// A bounded set of names: create the first time,
					// update after (the earlier rounds' writes included).
					name := fmt.Sprintf("g%d-%d", g, i%params.Objects)
					cur, err := s.Get(ctx, m, name)
					if errors.Is(err, store.ErrNotFound) {
						rec, err := s.Create(ctx, m, newPerson(name))
						if err != nil {
							fail("create", err)
						}
						ack(name, rec.Version)
						continue
					}
					if err != nil {
						fail("get", err)
					}
					obj, _ := store.Decode(m, cur)
					obj.(*storetest.Person).Spec.Age = storetest.Int64(int64(i % 100))
					obj.(*storetest.Person).Metadata.Labels = map[string]string{"round": round}
					rec, err := s.Update(ctx, m, obj)
					if err != nil {
						fail("update", err)
					}
					ack(name, rec.Version)
					continue
				}
				name := fmt.Sprintf("r%s-g%d-%d", round, g, i)
				rec, err := s.Create(ctx, m, newPerson(name))
				if err != nil {
					fail("create", err)
				}
				ack(name, rec.Version)
				if i%2 == 1 { // update a previous object of this goroutine
					prev := fmt.Sprintf("r%s-g%d-%d", round, g, i-1)
					cur, err := s.Get(ctx, m, prev)
					if err != nil {
						fail("get", err)
					}
					obj, _ := store.Decode(m, cur)
					obj.(*storetest.Person).Spec.Age = storetest.Int64(int64(i % 100))
					rec, err := s.Update(ctx, m, obj)
					if err != nil {
						fail("update", err)
					}
					ack(prev, rec.Version)
				}
			}
		}()
	}
	wg.Wait()
}
