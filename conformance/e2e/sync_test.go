package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// Helpers of the second-sync scenarios: the rendered output of one file is
// applied (server-side, as Argo CD does with ServerSideApply=true) over the
// output of the previous one, and a Deployment roll is played the way a
// RollingUpdate with one replica does it.

// fastLease shortens the controllers' leader election for scenarios that
// roll the controller (the rendered args keep the defaults: a 15 s lease,
// which would make each hand-over take up to 20 s here). Harness-only.
var fastLease = []string{
	"--leader-election-lease-duration=5s",
	"--leader-election-renew-deadline=3s",
	"--leader-election-retry-period=1s",
}

// renderObjs renders testdata/e2e/FILE (after args) and decodes the output.
func renderObjs(t *testing.T, file string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, _ := renderFile(t, file, args...)
	objs, err := DecodeStream(out)
	if err != nil {
		t.Fatalf("rendered output of %s: %v", file, err)
	}
	return objs
}

// liveDeployment reads the controller's Deployment back from the API server.
func liveDeployment(t *testing.T, c *Cluster) *appsv1.Deployment {
	t.Helper()
	d, err := c.Kube.AppsV1().Deployments(ns).Get(context.Background(), "argo-rollouts", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startLiveController starts a controller for the Deployment as stored (a
// pod of its current template) and waits until it leads.
func startLiveController(t *testing.T, c *Cluster, extraArgs ...string) *Controller {
	t.Helper()
	ctl := launchLiveController(t, c, extraArgs...)
	if err := ctl.WaitForLog(context.Background(), "Started controller", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	return ctl
}

func launchLiveController(t *testing.T, c *Cluster, extraArgs ...string) *Controller {
	t.Helper()
	u, err := toUnstructured(liveDeployment(t, c))
	if err != nil {
		t.Fatal(err)
	}
	return launchControllerArgs(t, c, u, extraArgs...)
}

// rollController plays the Deployment's roll after an apply changed its pod
// template: a new pod of the stored template starts next to the old one,
// then the old one ends (RollingUpdate, one replica). The new controller
// takes the leader lease once the old one's lapses. It fails when the pod
// template did not change: a real Deployment would not roll then.
func rollController(t *testing.T, c *Cluster, old *Controller) *Controller {
	t.Helper()
	dep := liveDeployment(t, c)
	if apiequality.Semantic.DeepEqual(dep.Spec.Template, old.Template) {
		t.Fatal("the apply left the Deployment's pod template as it was: the controller would not roll")
	}
	u, err := toUnstructured(dep)
	if err != nil {
		t.Fatal(err)
	}
	next := launchControllerArgs(t, c, u, fastLease...)
	start := time.Now()
	old.Stop()
	if err := next.WaitForLog(context.Background(), "Started controller", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("rolled: the new controller (%s) leads %s after the old one stopped", next.Release.Version, time.Since(start).Round(time.Millisecond))
	return next
}

// requireNoRoll fails when the stored pod template differs from the one ctl
// runs: the Deployment would roll.
func requireNoRoll(t *testing.T, c *Cluster, ctl *Controller) {
	t.Helper()
	if dep := liveDeployment(t, c); !apiequality.Semantic.DeepEqual(dep.Spec.Template, ctl.Template) {
		t.Fatalf("the apply changed the Deployment's pod template: the controller would roll\nrunning: %v\nstored:  %v", ctl.Template, dep.Spec.Template)
	}
}

// installedPlugins lists the plugins the controller copied into its
// plugin-bin/ (paths relative to it: "step/e2e-test").
func installedPlugins(t *testing.T, ctl *Controller) []string {
	t.Helper()
	root := filepath.Join(ctl.Dir, "plugin-bin")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// canaryRollout is a Rollout of one replica whose canary runs steps (a YAML
// flow list).
func canaryRollout(name, steps string) string {
	return fmt.Sprintf(`
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: %[1]s, namespace: argo-rollouts}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  strategy:
    canary:
      steps: %[2]s
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: app, image: example.invalid/%[1]s:v1}]
`, name, steps)
}

// newRevision changes the Rollout's image (a new revision, so its canary
// steps run) and, when steps is not empty, its steps, and waits until the
// controller has seen the change.
func newRevision(t *testing.T, c *Cluster, name, image, steps string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image)
	if steps != "" {
		patch = fmt.Sprintf(`{"spec":{"strategy":{"canary":{"steps":%s}},"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, steps, image)
	}
	mutateRollout(t, c, name, "", patch, func(ro *unstructured.Unstructured) bool {
		observed, _, _ := unstructured.NestedString(ro.Object, "status", "observedGeneration")
		return observed == itoa(ro.GetGeneration())
	})
}

// TestLabelChange: the next sync after a change of additionalMetadata.labels.
// The Deployment's selector is the same in both renderings, so the
// server-side apply of the new output succeeds, where the operator's
// selector (the pod labels) is refused as immutable; every object carries
// the new labels and no longer the removed one; the pod template changed,
// so the controller rolls to pods with the new labels, which the selector
// still selects, and the new controller reconciles the Rollouts.
func TestLabelChange(t *testing.T) {
	t.Parallel()
	before, after := renderObjs(t, "labels-before.yaml"), renderObjs(t, "labels-after.yaml")
	selector := func(objs []*unstructured.Unstructured) any {
		s, _, _ := unstructured.NestedFieldCopy(Find(objs, "Deployment", "argo-rollouts").Object, "spec", "selector")
		return s
	}
	want := map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "argo-rollouts"}}
	if !reflect.DeepEqual(selector(before), want) || !reflect.DeepEqual(selector(after), want) {
		t.Fatalf("Deployment selectors %v and %v, want both %v", selector(before), selector(after), want)
	}

	c := newCluster(t, release(t, DefaultVersion))
	ctx := context.Background()
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, before, ns)
	ctl := startLiveController(t, c, fastLease...)
	applyScenario(t, c, canaryRollout("labels", "[{setWeight: 50}, {pause: {duration: 1s}}]"))
	waitHealthy(t, c, ns, "labels", time.Minute)

	// The control: the operator's selector, the pod labels, for the new labels.
	op := Find(after, "Deployment", "argo-rollouts").DeepCopy()
	podLabels, _, _ := unstructured.NestedStringMap(op.Object, "spec", "template", "metadata", "labels")
	if err := unstructured.SetNestedStringMap(op.Object, podLabels, "spec", "selector", "matchLabels"); err != nil {
		t.Fatal(err)
	}
	err := c.Apply(ctx, []*unstructured.Unstructured{op}, ApplyOptions{DefaultNamespace: ns, DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "field is immutable") {
		t.Fatalf("applying a Deployment whose selector follows the labels: %v; want \"field is immutable\"", err)
	}
	t.Logf("the operator's selector would be refused: %s", firstLine(err.Error()))

	applyTwice(t, c, after, ns)
	for _, obj := range after {
		live, err := c.Get(ctx, obj)
		if err != nil {
			t.Fatal(err)
		}
		l := live.GetLabels()
		if obj.GetLabels()["example.com/team"] == "green" && (l["example.com/team"] != "green" || l["example.com/tier"] != "") {
			t.Errorf("%s %s: labels %v after the sync, want example.com/team=green and no example.com/tier", obj.GetKind(), obj.GetName(), l)
		}
	}

	next := rollController(t, c, ctl)
	tl := next.Template.Labels
	if tl["example.com/team"] != "green" || tl["example.com/tier"] != "" {
		t.Errorf("the new pods' labels %v, want example.com/team=green and no example.com/tier", tl)
	}
	sel, err := metav1.LabelSelectorAsSelector(liveDeployment(t, c).Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(tl)) {
		t.Errorf("the Deployment's selector %s does not select its new pods %v", sel, tl)
	}
	newRevision(t, c, "labels", "example.invalid/labels:v2", "")
	waitHealthy(t, c, ns, "labels", 2*time.Minute)
}

// TestPluginAddChangeRemove: four syncs of one installation
// (testdata/e2e/sync-plugins-*.yaml): a step plugin added, its arguments
// changed, then removed. Each apply changes the pod template's checksum, so
// the controller rolls; after each roll the new controller has installed
// exactly the configured plugins, and a Rollout revision that uses every one
// of them runs them, each plugin process with the configured arguments.
// Removing the plugin brings back the first checksum (same ConfigMap data).
func TestPluginAddChangeRemove(t *testing.T) {
	t.Parallel()
	stages := []struct {
		file    string
		plugins map[string][]string // name -> args of its process
	}{
		{"sync-plugins-1.yaml", map[string][]string{"step/e2e-test": {}}},
		{"sync-plugins-2-added.yaml", map[string][]string{"step/e2e-test": {}, "step/e2e-test-added": {"--e2e-marker", "added"}}},
		{"sync-plugins-3-changed.yaml", map[string][]string{"step/e2e-test": {}, "step/e2e-test-added": {"--e2e-marker", "changed"}}},
		{"sync-plugins-4-removed.yaml", map[string][]string{"step/e2e-test": {}}},
	}
	forEachRelease(t, func(t *testing.T, rel Release) {
		var args []string
		if rel.Version != DefaultVersion {
			args = []string{"--rollouts-image", rel.Image()}
		}
		c := newCluster(t, rel)
		ctx := context.Background()
		if err := c.EnsureNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		var ctl *Controller
		var sums []string
		for i, st := range stages {
			objs := renderObjs(t, st.file, args...)
			sum := podChecksum(t, objs)
			if want := configChecksum(configMapData(t, objs)); sum != want {
				t.Fatalf("%s: %s %s, want the README's hash %s", st.file, checksumAnnotation, sum, want)
			}
			sums = append(sums, sum)
			applyTwice(t, c, objs, ns)
			if i == 0 {
				ctl = startLiveController(t, c, fastLease...)
				applyScenario(t, c, canaryRollout("plugins", "[{plugin: {name: step/e2e-test, config: {return: Successful}}}]"))
				waitHealthy(t, c, ns, "plugins", time.Minute)
			} else {
				if sum == sums[i-1] {
					t.Fatalf("%s: checksum unchanged from %s", st.file, stages[i-1].file)
				}
				ctl = rollController(t, c, ctl)
			}

			names := slices.Sorted(maps.Keys(st.plugins))
			if got := installedPlugins(t, ctl); !slices.Equal(got, names) {
				t.Errorf("%s: the controller installed %v, want exactly %v", st.file, got, names)
			}
			var steps []string
			for _, n := range names {
				steps = append(steps, fmt.Sprintf(`{"plugin":{"name":%q,"config":{"return":"Successful"}}}`, n))
			}
			newRevision(t, c, "plugins", fmt.Sprintf("example.invalid/plugins:v%d", i+2), "["+strings.Join(steps, ",")+"]")
			waitHealthy(t, c, ns, "plugins", 2*time.Minute)
			cmds, err := ctl.PluginCommandLines()
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(cmds)); !slices.Equal(got, names) {
				t.Errorf("%s: plugin processes %v, want exactly %v", st.file, got, names)
			}
			for n, want := range st.plugins {
				if got, ok := cmds[n]; ok && !slices.Equal(got, want) {
					t.Errorf("%s: plugin %s runs with args %q, want %q", st.file, n, got, want)
				}
			}
		}
		if sums[3] != sums[0] {
			t.Errorf("after the plugin was removed the checksum is %.12s, not the first one's %.12s", sums[3], sums[0])
		}
	})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestChangesThatDoNotRoll: the next syncs after changes outside the pod
// template. A plugin's `rules` added (traffic-without-rules.yaml, then
// traffic.yaml) change only the controller's role: the Deployment does not
// roll, and the running controller's plugin, refused before, updates the
// HTTPRoute at once (RBAC is checked per request). Then the NetworkPolicy and
// the notification Secret leave the output (traffic-toggles.yaml): still no
// roll, and a server-side apply leaves both objects in the cluster (only a
// prune, as Argo CD's, deletes them).
func TestChangesThatDoNotRoll(t *testing.T) {
	t.Parallel()
	c := newCluster(t, release(t, DefaultVersion))
	ctx := context.Background()
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, renderObjs(t, "traffic-without-rules.yaml"), ns)
	ctl := startLiveController(t, c)
	applyScenario(t, c, gatewayScenario)
	waitFor(t, time.Minute, "the plugin's httproutes request refused", func() (bool, error) {
		return strings.Contains(ctl.Log(), `cannot get resource \"httproutes\"`), nil
	})

	applyTwice(t, c, renderObjs(t, "traffic.yaml"), ns)
	requireNoRoll(t, c, ctl)
	// The controller retries the failed reconcile with a growing back-off; any
	// change to the Rollout makes it try again now.
	mutateRollout(t, c, "web", "", `{"metadata":{"annotations":{"e2e.rollouts-render.test/rules-added":"1"}}}`,
		func(ro *unstructured.Unstructured) bool { phase, _ := rolloutPhase(ro); return phase == "Healthy" })
	setImage(t, c, "web", "example.invalid/web:v2")
	waitRouteWeights(t, c, "web", 70, 30, true)

	toggled := renderObjs(t, "traffic-toggles.yaml")
	for _, gone := range [][2]string{{"NetworkPolicy", "argo-rollouts-network-policy"}, {"Secret", "argo-rollouts-notification-secret"}} {
		if Find(toggled, gone[0], gone[1]) != nil {
			t.Fatalf("traffic-toggles.yaml still renders %s %s", gone[0], gone[1])
		}
	}
	applyTwice(t, c, toggled, ns)
	requireNoRoll(t, c, ctl)
	if _, err := c.Kube.NetworkingV1().NetworkPolicies(ns).Get(ctx, "argo-rollouts-network-policy", metav1.GetOptions{}); err != nil {
		t.Errorf("the NetworkPolicy after an apply without it: %v; want it still there (apply does not prune)", err)
	}
	if _, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "argo-rollouts-notification-secret", metav1.GetOptions{}); err != nil {
		t.Errorf("the notification Secret after an apply without it: %v; want it still there", err)
	}
}
