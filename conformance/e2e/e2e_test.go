package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var rolloutsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// newCluster starts a fresh control plane (with the release's CRDs, the
// other CRDs of E2E_CRD_DIRS and the ReplicaSet helper) for one test, so
// tests never see each other's controllers, cluster-wide RBAC or Rollouts.
func newCluster(t *testing.T, rel Release) *Cluster {
	t.Helper()
	return newClusterCRDs(t, rel.CRDDir())
}

// newClusterCRDs is newCluster with the CRDs of crdDirs (and E2E_CRD_DIRS'),
// none of Argo Rollouts' unless crdDirs has them.
func newClusterCRDs(t *testing.T, crdDirs ...string) *Cluster {
	t.Helper()
	return newClusterGates(t, crdDirs, nil)
}

// newClusterGates is newClusterCRDs with API server feature gates.
func newClusterGates(t *testing.T, crdDirs []string, featureGates []string) *Cluster {
	t.Helper()
	dirs, err := crdDirsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c, err := StartCluster(append(crdDirs, dirs...), featureGates...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane up with CRDs in %s", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	c.MarkReplicaSetsAvailable(ctx)
	t.Cleanup(func() {
		cancel()
		if err := c.Stop(); err != nil {
			t.Logf("stop control plane: %v", err)
		}
	})
	return c
}

// startController starts rollouts-controller for the Deployment in objs
// and waits until its informers have synced.
func startController(t *testing.T, c *Cluster, objs []*unstructured.Unstructured) *Controller {
	t.Helper()
	dep := Find(objs, "Deployment", "argo-rollouts")
	if dep == nil {
		t.Fatal("no Deployment argo-rollouts in the manifests")
	}
	start := time.Now()
	ctl := launchController(t, c, dep)
	if err := ctl.WaitForLog(context.Background(), "Started controller", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("controller started in %s", time.Since(start).Round(time.Millisecond))
	return ctl
}

// launchController starts rollouts-controller for the Deployment dep in a
// fresh working directory (a new pod's container) without waiting for it.
// The log is attached to the test output when the test fails (then with
// every goroutine's stack) or when E2E_SHOW_LOGS is set.
func launchController(t *testing.T, c *Cluster, dep *unstructured.Unstructured) *Controller {
	t.Helper()
	return launchControllerArgs(t, c, dep)
}

// launchControllerArgs is launchController with extra controller arguments.
func launchControllerArgs(t *testing.T, c *Cluster, dep *unstructured.Unstructured, extraArgs ...string) *Controller {
	t.Helper()
	return launchControllerOptions(t, c, dep, ControllerOptions{Dir: t.TempDir(), ExtraArgs: extraArgs})
}

// launchControllerOptions is launchController with the options spelled out.
func launchControllerOptions(t *testing.T, c *Cluster, dep *unstructured.Unstructured, o ControllerOptions) *Controller {
	t.Helper()
	ctl, err := c.StartController(context.Background(), dep, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			ctl.DumpStacks()
		}
		ctl.Stop()
		if t.Failed() || os.Getenv("E2E_SHOW_LOGS") != "" {
			t.Logf("controller log (%s):\n%s", ctl.LogPath, ctl.Log())
		}
	})
	return ctl
}

// applyTwice applies objs as a strict server-side dry run, then for real.
func applyTwice(t *testing.T, c *Cluster, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Apply(ctx, objs, ApplyOptions{DefaultNamespace: ns, DryRun: true}); err != nil {
		t.Fatalf("strict dry-run apply:\n%v", err)
	}
	if err := c.Apply(ctx, objs, ApplyOptions{DefaultNamespace: ns}); err != nil {
		t.Fatalf("apply:\n%v", err)
	}
}

// waitFor polls cond every 200ms until it returns true, fails, or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// releases are the Argo Rollouts releases run.sh built; without run.sh's
// environment the test fails (a green run must have run the scenarios).
func releases(t *testing.T) []Release {
	t.Helper()
	rels, err := Releases()
	if err != nil {
		t.Fatal(err)
	}
	return rels
}

// release is the built release of this version.
func release(t *testing.T, version string) Release {
	t.Helper()
	for _, r := range releases(t) {
		if r.Version == version {
			return r
		}
	}
	t.Fatalf("Argo Rollouts %s was not built (E2E_ROLLOUTS_MODULES)", version)
	return Release{}
}

func getRollout(c *Cluster, ns, name string) (*unstructured.Unstructured, error) {
	return c.Dynamic.Resource(rolloutsGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// rolloutPhase returns status.phase and status.message.
func rolloutPhase(ro *unstructured.Unstructured) (string, string) {
	p, _, _ := unstructured.NestedString(ro.Object, "status", "phase")
	m, _, _ := unstructured.NestedString(ro.Object, "status", "message")
	return p, m
}

// setImage changes the Rollout's pod template so a new revision (and so a
// canary with its steps) starts.
func setImage(t *testing.T, c *Cluster, name, image string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image)
	mutateRollout(t, c, name, "", patch, func(ro *unstructured.Unstructured) bool {
		observed, _, _ := unstructured.NestedString(ro.Object, "status", "observedGeneration")
		return observed == itoa(ro.GetGeneration())
	})
}

// mutateRollout merge-patches the Rollout (subresource "" or "status") and
// waits until seen(rollout) says the controller acted on it.
//
// Argo Rollouts v1.9.1 writes each Rollout it just patched back into its
// informer cache, which can overwrite a newer version from a concurrent
// change (argoproj/argo-rollouts#4073, #4694): the controller then never
// sees that change. It bites a test that changes a Rollout the moment the
// controller has finished with it. So: let the controller settle first,
// and if the change still goes unseen, touch an annotation; the next
// watch event carries the whole current object.
func mutateRollout(t *testing.T, c *Cluster, name, subresource, patch string, seen func(*unstructured.Unstructured) bool) {
	t.Helper()
	ri := c.Dynamic.Resource(rolloutsGVR).Namespace(ns)
	time.Sleep(time.Second)
	var sub []string
	if subresource != "" {
		sub = []string{subresource}
	}
	if _, err := ri.Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, sub...); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			ro, err := getRollout(c, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			if seen(ro) {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		if attempt == 3 {
			t.Fatalf("controller did not act on %s of rollout %s", patch, name)
		}
		t.Logf("controller has not acted on %s of rollout %s after 10s; touching an annotation (argo-rollouts#4694)", patch, name)
		nudge := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.rollouts-render.test/nudge":"%d"}}}`, attempt)
		if _, err := ri.Patch(context.Background(), name, types.MergePatchType, []byte(nudge), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustDecodeOne(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	objs, err := DecodeStream([]byte(y))
	if err != nil || len(objs) != 1 {
		t.Fatalf("decode fixture: %v (%d objects)", err, len(objs))
	}
	return objs[0]
}

// waitHealthy waits for status.phase Healthy of the Rollout's current generation.
func waitHealthy(t *testing.T, c *Cluster, ns, name string, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "rollout "+name+" Healthy", func() (bool, error) {
		ro, err := getRollout(c, ns, name)
		if err != nil {
			return false, err
		}
		observed, _, _ := unstructured.NestedString(ro.Object, "status", "observedGeneration")
		phase, _ := rolloutPhase(ro)
		return phase == "Healthy" && observed == itoa(ro.GetGeneration()), nil
	})
}
