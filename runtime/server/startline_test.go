package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/svcrun/svc/runtime/server/servertest"
)

// The start-up line names the models served from the start, so an
// operator reading the log sees what the server serves.
func TestStartLineListsModels(t *testing.T) {
	var log syncBuffer
	servertest.Start(t, servertest.Options{AdminPassword: "pw", Log: &log})
	sc := bufio.NewScanner(bytes.NewReader(log.Bytes()))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil || line["msg"] != "server started" {
			continue
		}
		models, _ := line["models"].(string)
		for _, want := range []string{"v1alpha1/Role", "v1alpha1/User", "v1alpha1/Plugin"} {
			if !strings.Contains(","+models+",", ","+want+",") {
				t.Errorf("start line models %q lack %s", models, want)
			}
		}
		return
	}
	t.Fatalf("no start line in the log:\n%s", log.Bytes())
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent logging.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}
