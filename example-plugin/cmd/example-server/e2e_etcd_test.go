package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/runtime/store/etcdtest"
)

// These tests run replicas of the example server on one etcd cluster, as
// processes, as an operator would (docs/deployment.md).

// runEtcd starts a replica on endpoints and prefix.
func runEtcd(t *testing.T, endpoints []string, prefix string, env ...string) *server {
	t.Helper()
	t.Setenv("SVC_TEST_ETCD", "") // the flags below pick the backend
	return runArgs(t, t.TempDir(), []string{"--etcd-endpoints", strings.Join(endpoints, ","), "--etcd-prefix", prefix}, env...)
}

// raw does a request and returns status, body and the revision header.
func (s *server) raw(method, path, body string, hdr ...string) (int, []byte, int64) {
	s.t.Helper()
	hr, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	hr.SetBasicAuth("admin", adminPW)
	hr.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		hr.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	rev, _ := strconv.ParseInt(res.Header.Get("X-Svc-Revision"), 10, 64)
	return res.StatusCode, b, rev
}

func TestReplicasOnEtcd(t *testing.T) {
	c := etcdtest.Start(t, 1)
	env := "SVC_ADMIN_PASSWORD=" + adminPW
	a := runEtcd(t, c.Endpoints(), "/rep/", env)
	b := runEtcd(t, c.Endpoints(), "/rep/", env)

	// Read your writes across replicas: the write's revision, asked of B.
	st, body, rev := a.raw("POST", persons, person("ann", "Ann", ""))
	if st != 201 || rev == 0 {
		t.Fatalf("create on A: %d %s (revision %d)", st, body, rev)
	}
	st, body, brev := b.raw("GET", persons+"/ann", "", "X-Svc-Min-Revision", strconv.FormatInt(rev, 10))
	if st != 200 || brev < rev {
		t.Fatalf("get on B at revision %d: %d %s (B at %d)", rev, st, body, brev)
	}
	if st, body, _ := b.raw("GET", persons+"/ann?minRevision=x", ""); st != 400 || !strings.Contains(string(body), "minRevision") {
		t.Fatalf("bad minRevision: %d %s", st, body)
	}
	if st, body, _ := b.raw("GET", persons+"/ann", "", "X-Svc-Min-Revision", strconv.FormatInt(rev+1000000, 10)); st != 503 {
		t.Fatalf("a revision no one has: %d %s, want 503", st, body)
	}

	// A grant made on A applies on B once B has its revision.
	if st, body, _ := a.raw("POST", "/api/v1alpha1/users", `{"apiVersion":"v1alpha1","kind":"User","metadata":{"name":"reader"},"spec":{"displayName":"R","password":"reader-password-1"}}`); st != 201 {
		t.Fatalf("create user: %d %s", st, body)
	}
	asReader := func(s *server, minRev int64) int {
		hr, _ := http.NewRequest("GET", s.url+persons, nil)
		hr.SetBasicAuth("reader", "reader-password-1")
		if minRev > 0 {
			hr.Header.Set("X-Svc-Min-Revision", strconv.FormatInt(minRev, 10))
		}
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	_, _, urev := a.raw("GET", "/healthz", "")
	if st := asReader(b, urev); st != 403 {
		t.Fatalf("reader before any grant, on B: %d, want 403", st)
	}
	if st, body, _ := a.raw("POST", "/api/v1alpha1/roles", `{"apiVersion":"v1alpha1","kind":"Role","metadata":{"name":"person-reader"},"rules":[{"apiGroups":["people.example.com"],"resources":["persons"],"verbs":["get","list"]}]}`); st != 201 {
		t.Fatalf("create role: %d %s", st, body)
	}
	st, body, grev := a.raw("POST", "/api/v1alpha1/rolebindings", `{"apiVersion":"v1alpha1","kind":"RoleBinding","metadata":{"name":"reader-binding"},"roleRef":{"apiGroup":"","kind":"Role","name":"person-reader"},"subjects":[{"kind":"User","name":"reader","apiGroup":""}]}`)
	if st != 201 {
		t.Fatalf("create binding: %d %s", st, body)
	}
	if st := asReader(a, 0); st != 200 {
		t.Fatalf("reader on A right after the grant: %d", st)
	}
	if st := asReader(b, grev); st != 200 {
		t.Fatalf("reader on B at the grant's revision %d: %d", grev, st)
	}

	// Concurrent updates of one object on A and B: one wins each round.
	for round := 0; round < 10; round++ {
		_, cur, _ := a.raw("GET", persons+"/ann", "")
		var obj map[string]any
		json.Unmarshal(cur, &obj)
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i, s := range []*server{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": obj["metadata"],
					"spec": map[string]any{"name": fmt.Sprintf("r%d-%d", round, i)}}
				js, _ := json.Marshal(o)
				codes[i], _, _ = s.raw("PUT", persons+"/ann", string(js))
			}()
		}
		wg.Wait()
		if !(codes[0] == 200 && codes[1] == 409 || codes[0] == 409 && codes[1] == 200) {
			t.Fatalf("round %d: codes %v, want one 200 and one 409", round, codes)
		}
		// Both replicas at the winner's revision before the next round.
		_, _, r := a.raw("GET", "/healthz", "")
		b.raw("GET", "/healthz", "", "X-Svc-Min-Revision", strconv.FormatInt(r, 10))
	}

	// The friend counter runs on one replica: the count converges, and a
	// replica killed with -9 hands it over.
	a.raw("POST", persons, person("bob", "Bob", "ann"))
	a.eventuallyFriendCount("ann", 1)
	b.eventuallyFriendCount("ann", 1)
	a.kill()
	b.raw("POST", persons, person("cy", "Cy", "ann"))
	b.eventuallyFriendCount("ann", 2)

	// A replica started later catches up; one restarted after kill -9
	// finds every acknowledged write.
	c2 := runEtcd(t, c.Endpoints(), "/rep/", env)
	c2.eventuallyFriendCount("ann", 2)
	// kill -9 under load: four writers, killed mid-stream.
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				n := fmt.Sprintf("k%d-%03d", w, i)
				hr, _ := http.NewRequest("POST", c2.url+persons, strings.NewReader(person(n, "K", "")))
				hr.SetBasicAuth("admin", adminPW)
				hr.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(hr)
				if err != nil {
					return // the replica is gone
				}
				res.Body.Close()
				if res.StatusCode == 201 {
					mu.Lock()
					acked = append(acked, n)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	c2.kill()
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}
	d := runEtcd(t, c.Endpoints(), "/rep/", env)
	for _, n := range acked {
		if st, body, _ := d.raw("GET", persons+"/"+n, ""); st != 200 {
			t.Fatalf("acknowledged %s missing after kill -9: %d %s", n, st, body)
		}
	}
}

// A data directory of the embedded store moves into etcd with the
// migrate subcommand and is served the same.
func TestMigrateDataDirToEtcd(t *testing.T) {
	c := etcdtest.Start(t, 1)
	dir := t.TempDir()
	env := "SVC_ADMIN_PASSWORD=" + adminPW
	t.Setenv("SVC_TEST_ETCD", "")
	s := run(t, dir, env)
	const n = 10000
	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				body := fmt.Sprintf(`{%s,"metadata":{"name":"m%05d","labels":{"batch":"b%d"}},"spec":{"name":"M %d","email":"m%d@example.com"}}`, envelope, i, i%7, i, i)
				if st, out, _ := s.raw("POST", persons, body); st != 201 {
					t.Errorf("create m%05d: %d %s", i, st, out)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	lists := []string{persons + "?labelSelector=batch%3Db3&sort=metadata.name,asc&size=50", "/api/v1alpha1/users", "/api/v1alpha1/roles", "/api/v1alpha1/plugins"}
	before := map[string]string{}
	for _, l := range lists {
		st, body, _ := s.raw("GET", l, "")
		if st != 200 {
			t.Fatalf("GET %s: %d %s", l, st, body)
		}
		before[l] = string(body)
	}
	s.stop()

	migrate := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append([]string{"migrate", "--from-data-dir", dir, "--to-etcd", strings.Join(c.Endpoints(), ",")}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := migrate()
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	if !strings.Contains(out, fmt.Sprintf("%8d  people.example.com/persons", n)) {
		t.Fatalf("migrate output lacks the person count:\n%s", out)
	}
	if out, err := migrate(); err == nil || !strings.Contains(out, "not empty") {
		t.Fatalf("a second migrate into the same prefix: %v\n%s", err, out)
	}

	e := runEtcd(t, c.Endpoints(), "/svc/", env)
	for _, l := range lists {
		st, body, _ := e.raw("GET", l, "")
		if st != 200 || !sameItems(t, before[l], string(body)) {
			t.Fatalf("GET %s on etcd: %d\n%s\nwant\n%s", l, st, body, before[l])
		}
	}
	// Unique values came along: a taken email is refused on etcd.
	body := fmt.Sprintf(`{%s,"metadata":{"name":"dup"},"spec":{"name":"D","email":"m7@example.com"}}`, envelope)
	if st, out, _ := e.raw("POST", persons, body); st != 409 || !strings.Contains(string(out), "spec.email") {
		t.Fatalf("duplicate email after migration: %d %s", st, out)
	}
}

// sameItems compares two list answers' items and totals (lists of
// plugins carry live status that may differ by a timestamp).
func sameItems(t *testing.T, a, b string) bool {
	var x, y struct {
		Total int               `json:"total"`
		Items []json.RawMessage `json:"items"`
	}
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	if x.Total != y.Total || len(x.Items) != len(y.Items) {
		return false
	}
	for i := range x.Items {
		var p, q map[string]any
		json.Unmarshal(x.Items[i], &p)
		json.Unmarshal(y.Items[i], &q)
		delete(p, "status")
		delete(q, "status")
		pm, qm := p["metadata"].(map[string]any), q["metadata"].(map[string]any)
		if pm["name"] != qm["name"] || pm["creationTimestamp"] != qm["creationTimestamp"] {
			t.Logf("item %d: %v vs %v", i, pm, qm)
			return false
		}
		pj, _ := json.Marshal(p["spec"])
		qj, _ := json.Marshal(q["spec"])
		if string(pj) != string(qj) {
			t.Logf("item %d spec: %s vs %s", i, pj, qj)
			return false
		}
	}
	return true
}

// admin reset on etcd works beside running replicas: the new password
// applies on them as soon as they have the write.
func TestAdminResetOnEtcd(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a := runEtcd(t, c.Endpoints(), "/reset/", "SVC_ADMIN_PASSWORD="+adminPW)
	cmd := exec.Command(binary, "admin", "reset", "--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--etcd-prefix", "/reset/")
	cmd.Env = append(cmd.Environ(), "SVC_ADMIN_PASSWORD=recovered-password-1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("admin reset: %v\n%s", err, out)
	}
	a.eventually(req{method: "GET", path: persons, user: "admin", pw: "recovered-password-1"}, 200)
}

// Quorum lost: writes answer 503 with Retry-After, reads go on from
// memory and /readyz says the replica is degraded (200: it still serves
// reads); quorum back: writes go on without a restart.
func TestQuorumLossOverHTTP(t *testing.T) {
	c := etcdtest.Start(t, 3)
	a := runEtcd(t, c.Endpoints(), "/quorum/", "SVC_ADMIN_PASSWORD="+adminPW)
	if st, body, _ := a.raw("POST", persons, person("before", "B", "")); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	readyz := func() (int, map[string]any) {
		st, body, _ := a.raw("GET", "/readyz", "")
		var doc map[string]any
		json.Unmarshal(body, &doc)
		return st, doc
	}
	if st, doc := readyz(); st != 200 || doc["status"] == "degraded" {
		t.Fatalf("readyz with quorum: %d %v", st, doc)
	}
	c.Stop(1)
	c.Stop(2)
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		hr, _ := http.NewRequest("POST", a.url+persons, strings.NewReader(person(fmt.Sprintf("lost-%d", i), "L", "")))
		hr.SetBasicAuth("admin", adminPW)
		hr.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == 503 {
			if res.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "title") {
				t.Fatalf("write without quorum: 503 without Retry-After or problem body: %v %s", res.Header, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still answer %d %s 30s after quorum was lost", res.StatusCode, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st, body, _ := a.raw("GET", persons+"/before", ""); st != 200 {
		t.Fatalf("read without quorum: %d %s", st, body)
	}
	if st, doc := readyz(); st != 200 || doc["status"] != "degraded" {
		t.Fatalf("readyz without quorum: %d %v, want 200 degraded", st, doc)
	}
	c.Restart(1)
	c.Restart(2)
	c.WaitHealthy()
	a.eventually(req{method: "POST", path: persons, body: person("after", "A", ""), user: "admin", pw: adminPW}, 201)
	deadline = time.Now().Add(30 * time.Second)
	for {
		st, doc := readyz()
		if st == 200 && doc["status"] != "degraded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz after quorum came back: %d %v", st, doc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
