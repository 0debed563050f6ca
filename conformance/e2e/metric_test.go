package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var analysisRunsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "analysisruns"}

// fakePrometheus answers the instant-query API on loopback. The query text
// is a number and is returned as the scalar result, so each AnalysisRun
// chooses its own measurement through an argument.
func fakePrometheus(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var queries atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		q := r.FormValue("query") // POST form or GET query; the client tries POST first
		if _, err := strconv.ParseFloat(q, 64); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"status":"error","errorType":"bad_data","error":%q}`, "query must be a number, got "+q)
			return
		}
		queries.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"scalar","result":[%d,%q]}}`, time.Now().Unix(), q)
	}))
	t.Cleanup(srv.Close)
	return srv, &queries
}

// TestMetricPlugin (testdata/e2e/metric.yaml): an analysis step measured
// through the sample Prometheus metric plugin promotes the canary on a good
// value and aborts the Rollout on a bad one.
func TestMetricPlugin(t *testing.T) {
	t.Parallel()
	prom, queries := fakePrometheus(t)
	forEachSource(t, "metric.yaml", func(t *testing.T, c *Cluster, ctl *Controller) {
		before := queries.Load()
		objs := []*unstructured.Unstructured{mustDecodeOne(t, fmt.Sprintf(`
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: threshold, namespace: argo-rollouts}
spec:
  args: [{name: value}]
  metrics:
  - name: success-rate
    count: 1
    failureLimit: 0
    successCondition: result >= 0.9
    provider:
      plugin:
        argoproj/sample-prometheus: {address: %q, query: "{{args.value}}"}
`, prom.URL))}
		for name, value := range map[string]string{"good": "0.99", "bad": "0.1"} {
			objs = append(objs, mustDecodeOne(t, fmt.Sprintf(`
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: %[1]s, namespace: argo-rollouts}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  strategy:
    canary:
      steps:
      - analysis:
          templates: [{templateName: threshold}]
          args: [{name: value, value: %[2]q}]
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: app, image: example.invalid/app:v1}]
`, name, value)))
		}
		applyTwice(t, c, objs, ns)
		for _, name := range []string{"good", "bad"} {
			waitHealthy(t, c, ns, name, time.Minute)
			setImage(t, c, name, "example.invalid/app:v2")
		}

		waitHealthy(t, c, ns, "good", 2*time.Minute)
		waitFor(t, 2*time.Minute, "rollout bad aborted", func() (bool, error) {
			ro, err := getRollout(c, ns, "bad")
			if err != nil {
				return false, err
			}
			aborted, _, _ := unstructured.NestedBool(ro.Object, "status", "abort")
			return aborted, nil
		})
		if phase, msg := rolloutPhaseOf(t, c, "bad"); phase != "Degraded" {
			t.Errorf("rollout bad: phase %s (%s), want Degraded", phase, msg)
		}
		for name, want := range map[string]string{"good": "Successful", "bad": "Failed"} {
			if got := analysisRunPhase(t, c, name); got != want {
				t.Errorf("AnalysisRun of rollout %s: phase %q, want %q", name, got, want)
			}
		}
		if n := queries.Load() - before; n < 2 {
			t.Errorf("fake Prometheus answered %d queries, want at least 2 (one per AnalysisRun)", n)
		}
	})
}

func rolloutPhaseOf(t *testing.T, c *Cluster, name string) (string, string) {
	t.Helper()
	ro, err := getRollout(c, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return rolloutPhase(ro)
}

// analysisRunPhase returns the phase of the one AnalysisRun the Rollout's
// canary step created (the controller labels runs with the rollout name
// only through ownerReferences, so match on those).
func analysisRunPhase(t *testing.T, c *Cluster, rollout string) string {
	t.Helper()
	list, err := c.Dynamic.Resource(analysisRunsGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, ar := range list.Items {
		for _, ref := range ar.GetOwnerReferences() {
			if ref.Kind == "Rollout" && ref.Name == rollout {
				p, _, _ := unstructured.NestedString(ar.Object, "status", "phase")
				phases = append(phases, p)
			}
		}
	}
	if len(phases) != 1 {
		t.Fatalf("rollout %s owns %d AnalysisRuns (%v), want 1", rollout, len(phases), phases)
	}
	return phases[0]
}
