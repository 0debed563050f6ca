package e2e

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStepPlugin (testdata/e2e/step.yaml): the controller installs both step
// plugin entries from the ConfigMap, runs the enabled one as a canary step,
// and skips the step of the entry marked disabled (recording it as disabled)
// instead of failing.
func TestStepPlugin(t *testing.T) {
	t.Parallel()
	forEachSource(t, "step.yaml", func(t *testing.T, c *Cluster, ctl *Controller) {
		if err := ctl.WaitForLog(context.Background(), "plugin-bin/step/e2e-test-disabled", time.Second); err != nil {
			t.Error(err)
		}
		ro := mustDecodeOne(t, `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: steps, namespace: argo-rollouts}
spec:
  replicas: 1
  selector: {matchLabels: {app: steps}}
  strategy:
    canary:
      steps:
      - plugin: {name: step/e2e-test-disabled, config: {return: Failed}}
      - plugin: {name: step/e2e-test, config: {return: Successful}}
  template:
    metadata: {labels: {app: steps}}
    spec:
      containers: [{name: app, image: example.invalid/app:v1}]
`)
		applyTwice(t, c, []*unstructured.Unstructured{ro}, ns)
		waitHealthy(t, c, ns, "steps", time.Minute)
		setImage(t, c, "steps", "example.invalid/app:v2")
		waitFor(t, 2*time.Minute, "both step plugin statuses", func() (bool, error) {
			ro, err := getRollout(c, ns, "steps")
			if err != nil {
				return false, err
			}
			sts, _, _ := unstructured.NestedSlice(ro.Object, "status", "canary", "stepPluginStatuses")
			return len(sts) >= 2, nil
		})
		waitHealthy(t, c, ns, "steps", 2*time.Minute)

		ro, err := getRollout(c, ns, "steps")
		if err != nil {
			t.Fatal(err)
		}
		sts, _, _ := unstructured.NestedSlice(ro.Object, "status", "canary", "stepPluginStatuses")
		want := []struct {
			name     string
			disabled bool
			phase    string
		}{
			// A disabled entry's step is skipped; its configured Failed never runs.
			{"step/e2e-test-disabled", true, ""},
			{"step/e2e-test", false, "Successful"},
		}
		for i, w := range want {
			m, _ := sts[i].(map[string]any)
			disabled, _ := m["disabled"].(bool)
			phase, _ := m["phase"].(string)
			if m["name"] != w.name || disabled != w.disabled || (w.phase != "" && phase != w.phase) {
				t.Errorf("stepPluginStatuses[%d] = %v, want name %s disabled %v phase %q", i, m, w.name, w.disabled, w.phase)
			}
		}
		if stable, _, _ := unstructured.NestedString(ro.Object, "status", "stableRS"); stable == "" {
			t.Error("no stableRS after promotion")
		}
	})
}
