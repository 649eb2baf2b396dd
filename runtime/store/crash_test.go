package store_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
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

// TestCrashRecovery re-executes the test binary as a child that writes
// continuously from several goroutines and prints every acknowledged
// write, kills it with SIGKILL at a random moment, reopens the store and
// checks that every acknowledged write is there with its version. The data
// directory carries over from round to round.
func TestCrashRecovery(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir, os.Getenv("SVC_STORE_CRASH_ROUND"))
		return
	}
	if testing.Short() {
		t.Skip("crash test re-executes the binary")
	}
	dir := t.TempDir()
	acked := map[string]int64{} // name -> last acknowledged version
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	total := 0
	for round := range 20 {
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
		for name, v := range acked {
			rec, err := s.Get(context.Background(), m, name)
			if err != nil {
				t.Fatalf("round %d: acknowledged %s v%d lost: %v", round, name, v, err)
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
		}
		s.Close()
		t.Logf("round %d: %d acknowledged writes before kill at %v", round, n, killAt)
	}
	if total < 200 {
		t.Fatalf("only %d acknowledged writes in 20 rounds: the child barely ran", total)
	}
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
func crashChild(dir, round string) {
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
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; ; i++ {
				name := fmt.Sprintf("r%s-g%d-%d", round, g, i)
				p := storetest.NewPerson(name, storetest.PersonSpec{Name: strings.Repeat("x", 80), Tags: []string{"a", "b"}})
				p.Metadata.Labels = map[string]string{"round": round}
				rec, err := s.Create(ctx, m, p)
				if err != nil {
					fmt.Fprintln(os.Stderr, "child create:", err)
					os.Exit(2)
				}
				ack(name, rec.Version)
				if i%2 == 1 { // update a previous object of this goroutine
					prev := fmt.Sprintf("r%s-g%d-%d", round, g, i-1)
					cur, err := s.Get(ctx, m, prev)
					if err != nil {
						fmt.Fprintln(os.Stderr, "child get:", err)
						os.Exit(2)
					}
					obj, _ := store.Decode(m, cur)
					obj.(*storetest.Person).Spec.Age = storetest.Int64(int64(i % 100))
					rec, err := s.Update(ctx, m, obj)
					if err != nil {
						fmt.Fprintln(os.Stderr, "child update:", err)
						os.Exit(2)
					}
					ack(prev, rec.Version)
				}
			}
		}()
	}
	wg.Wait()
}
