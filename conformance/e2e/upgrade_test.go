package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestUpgrade: a RolloutManager moves from v1.9.1 to v1.10.2
// (testdata/e2e/upgrade-{before,after}.yaml), CRDs first, the README's
// terminal way. A canary paused under v1.9.1 before the upgrade is
// finished by the v1.10.2 controller: it finds the Rollout still paused at
// its step, and on promotion makes the paused canary's ReplicaSet stable and
// runs the step plugin step that follows, with v1.10.2's plugin.
func TestUpgrade(t *testing.T) {
	t.Parallel()
	from, to := release(t, DefaultVersion), release(t, "v1.10.2")
	before, after := renderObjs(t, "upgrade-before.yaml"), renderObjs(t, "upgrade-after.yaml")

	c := newClusterCRDs(t)
	ctx := context.Background()
	applyCRDsTerminal(t, c, from)
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, before, ns)
	ctl := startLiveController(t, c, fastLease...)
	if ctl.Release.Version != from.Version {
		t.Fatalf("upgrade-before.yaml runs %s, want %s", ctl.Release.Version, from.Version)
	}
	applyScenario(t, c, canaryRollout("upgrade",
		"[{setWeight: 50}, {pause: {}}, {plugin: {name: step/e2e-test, config: {return: Successful}}}]"))
	waitHealthy(t, c, ns, "upgrade", time.Minute)
	newRevision(t, c, "upgrade", "example.invalid/upgrade:v2", "")
	var canaryHash string
	waitFor(t, time.Minute, "the canary paused at step 1 under "+from.Version, func() (bool, error) {
		ro, err := getRollout(c, ns, "upgrade")
		if err != nil {
			return false, err
		}
		pcs, _, _ := unstructured.NestedSlice(ro.Object, "status", "pauseConditions")
		idx, _, _ := unstructured.NestedInt64(ro.Object, "status", "currentStepIndex")
		canaryHash, _, _ = unstructured.NestedString(ro.Object, "status", "currentPodHash")
		return len(pcs) > 0 && idx == 1, nil
	})

	applyCRDsTerminal(t, c, to)
	applyTwice(t, c, after, ns)
	next := rollController(t, c, ctl)
	if next.Release.Version != to.Version {
		t.Fatalf("after the upgrade the Deployment runs %s, want %s", next.Release.Version, to.Version)
	}
	if !hasLine(next.Log(), "Argo Rollouts controller starting", strings.TrimPrefix(to.Version, "v")) {
		t.Errorf("the new controller does not say it is %s", to.Version)
	}
	// The new controller reconciles the paused Rollout and leaves it paused.
	waitFor(t, time.Minute, "the "+to.Version+" controller to reconcile the Rollout", func() (bool, error) {
		return hasLine(next.Log(), "Reconciliation completed", "rollout=upgrade"), nil
	})
	if phase, msg := rolloutPhaseOf(t, c, "upgrade"); phase != "Paused" {
		t.Fatalf("after the upgrade the Rollout is %s (%s), want still Paused", phase, msg)
	}
	promote(t, c, "upgrade")
	waitHealthy(t, c, ns, "upgrade", 2*time.Minute)
	ro, err := getRollout(c, ns, "upgrade")
	if err != nil {
		t.Fatal(err)
	}
	if stable, _, _ := unstructured.NestedString(ro.Object, "status", "stableRS"); stable != canaryHash {
		t.Errorf("stableRS %q, want the canary paused before the upgrade (%q)", stable, canaryHash)
	}
	sts, _, _ := unstructured.NestedSlice(ro.Object, "status", "canary", "stepPluginStatuses")
	if len(sts) == 0 || stringOf(sts[len(sts)-1].(map[string]any)["phase"]) != "Successful" {
		t.Errorf("stepPluginStatuses %v, want the plugin step Successful", sts)
	}
}
