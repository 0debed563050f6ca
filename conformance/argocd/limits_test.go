package argocd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// managers is n namespace-scoped RolloutManagers (one per namespace, as validation
// requires), in files of 100.
func managers(n int) map[string]string {
	files := map[string]string{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("managers-%03d.yaml", i/100)
		files[name] += fmt.Sprintf(`---
apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
  namespace: team-%05d
spec:
  namespaceScoped: true
  plugins:
    metric:
    - name: argoproj-labs/sample-prometheus
      location: %s
      sha256: %s
`, i, promLocation, strings.Repeat("cd", 32))
	}
	return files
}

// TestDefaultTimeout: a large application (1,000 RolloutManagers, 8,003 objects) renders
// through the repo-server within the controller's default 60 s; and a generation that
// outlives its deadline is stopped there (the cmp-server runs generate under the request's
// context: its own SIGTERM and exec.CommandContext's SIGKILL race to end it), nothing keeps
// running, and the error says so.
func TestDefaultTimeout(t *testing.T) {
	r := newRepo(t, managers(1000))
	a := defaultApp("")
	started := time.Now()
	got := received(t, a, mustGenerate(t, r, a))
	elapsed := time.Since(started)
	t.Logf("1,000 RolloutManagers: %d objects in %v (deadline %v)", len(got), elapsed.Round(time.Millisecond), controllerTimeout)
	sameObjects(t, got, render(t, r, "--namespace="+appNS))

	// 10,000 managers take longer than this deadline to render: the child must be running
	// when it passes (tried again with a longer one if the machine was too slow to start it).
	big := newRepo(t, managers(10000))
	generating := func() bool {
		for _, child := range side.children() {
			if strings.HasSuffix(child, " generate") {
				return true
			}
		}
		return false
	}
	for _, deadline := range []time.Duration{800 * time.Millisecond, 2 * time.Second, 4 * time.Second} {
		seen := make(chan bool, 1)
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		go func() {
			for ctx.Err() == nil {
				if generating() {
					seen <- true
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			seen <- false
		}()
		_, err := big.generate(ctx, side, a)
		cancel()
		if !<-seen {
			t.Logf("with a %v deadline the generate command had not started yet", deadline)
			continue
		}
		if err == nil {
			t.Fatalf("a generation past its %v deadline succeeded", deadline)
		}
		// The cmp-server's own SIGTERM and exec.CommandContext's SIGKILL race: either ends it.
		killed := strings.Contains(err.Error(), "`/usr/local/bin/rollouts-render generate` failed signal: killed") ||
			strings.Contains(err.Error(), "`/usr/local/bin/rollouts-render generate` failed signal: terminated")
		if status.Code(err) != codes.DeadlineExceeded && !killed {
			t.Errorf("past the deadline Argo CD reports %v", err)
		}
		stopped := time.Now()
		for generating() {
			if time.Since(stopped) > 3*time.Second {
				t.Fatalf("rollouts-render still runs 3 s after the deadline: %v", side.children())
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("past a %v deadline: %v; rollouts-render gone %v later", deadline, err, time.Since(stopped).Round(time.Millisecond))
		return
	}
	t.Fatal("the generate command never ran before the deadline")
}

// TestManyFiles: a repository of 5,000 files (the repo-server sends all of it, once for
// discovery and once for generation) with an application directory of 500 files, a hidden
// file and a subdirectory: the same objects as render, within the default timeout.
func TestManyFiles(t *testing.T) {
	manyFiles := 5000
	if n, err := strconv.Atoi(os.Getenv("RR_MANY_FILES")); err == nil {
		manyFiles = n
	}
	files := map[string]string{"rm.yaml": pinned, ".hidden.yaml": "not: [yaml\n", "nested/skipped.yaml": "not: [yaml\n", "README.md": "# notes\n"}
	for i := 0; i < 500; i++ {
		files[fmt.Sprintf("rollout-%03d.yaml", i)] = strings.Replace(rollout, "name: web\n", fmt.Sprintf("name: web-%03d\n", i), 1)
	}
	r := newRepo(t, files)
	for i := 0; i < manyFiles; i++ {
		path := filepath.Join(r.root, "clusters", fmt.Sprintf("c%03d", i/100), fmt.Sprintf("values-%03d.yaml", i%100))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(fmt.Sprintf("replicas: %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := defaultApp("")
	started := time.Now()
	got := received(t, a, mustGenerate(t, r, a))
	t.Logf("%d files: %d objects in %v", manyFiles+len(files), len(got), time.Since(started).Round(time.Millisecond))
	sameObjects(t, got, render(t, r, "--namespace="+appNS))
}
