package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// checksumAnnotation is the pod-template annotation rollouts-render writes
// so that a plugin change rolls the controller.
const checksumAnnotation = "checksum/argo-rollouts-config"

// TestPluginChangeRollsController: Argo Rollouts reads its plugins only when
// it starts, so rollouts-render promises (README) that the controller's pod
// template carries a checksum of the ConfigMap data that changes when, and
// only when, that data changes. With testdata/e2e/change-{before,after,
// unrelated}.yaml:
//
//   - each output's annotation is the README's hash of its ConfigMap data;
//     "unrelated" (annotations on every object, no NetworkPolicy) keeps the
//     checksum of "before", "after" (a new step plugin with args) changes it;
//   - "before" runs; a Rollout whose second step names the new plugin gets
//     stuck there ("not configured in configmap");
//   - "after" is applied: the Deployment's template (and generation) change,
//     while the running controller still does not know the plugin;
//   - the rollout a Deployment would do: a new controller in a fresh working
//     directory next to the old one, then the old one stops. The new one
//     copies the new plugin, takes over, runs the step with the plugin
//     started with its args, and the Rollout completes.
//
// Product-only: upstream's install.yaml has no checksum to test.
func TestPluginChangeRollsController(t *testing.T) {
	t.Parallel()
	render := func(file string) []*unstructured.Unstructured {
		out, _ := renderFile(t, file)
		objs, err := DecodeStream(out)
		if err != nil {
			t.Fatalf("rendered output of %s: %v", file, err)
		}
		return objs
	}
	before, unrelated, after := render("change-before.yaml"), render("change-unrelated.yaml"), render("change-after.yaml")

	sums := map[string]string{}
	for name, objs := range map[string][]*unstructured.Unstructured{"before": before, "unrelated": unrelated, "after": after} {
		got, want := podChecksum(t, objs), configChecksum(configMapData(t, objs))
		if got != want {
			t.Errorf("%s: %s is %s, but the README's hash of the ConfigMap data is %s", name, checksumAnnotation, got, want)
		}
		sums[name] = got
	}
	cmBefore, cmUnrelated := Find(before, "ConfigMap", "argo-rollouts-config"), Find(unrelated, "ConfigMap", "argo-rollouts-config")
	if reflect.DeepEqual(cmBefore.GetAnnotations(), cmUnrelated.GetAnnotations()) || Find(unrelated, "NetworkPolicy", "argo-rollouts-network-policy") != nil {
		t.Fatal("change-unrelated.yaml renders like change-before.yaml: it no longer tests an unrelated change")
	}
	if !reflect.DeepEqual(configMapData(t, before), configMapData(t, unrelated)) {
		t.Fatal("change-unrelated.yaml changes the ConfigMap data: it no longer tests an unrelated change")
	}
	if sums["unrelated"] != sums["before"] {
		t.Errorf("checksum changed (%s -> %s) although the ConfigMap data did not", sums["before"], sums["unrelated"])
	}
	if sums["after"] == sums["before"] {
		t.Fatalf("checksum unchanged (%s) although a plugin was added", sums["before"])
	}
	t.Logf("%s: before %.12s, unrelated change %.12s, plugin added %.12s", checksumAnnotation, sums["before"], sums["unrelated"], sums["after"])

	c := newCluster(t, release(t, DefaultVersion))
	ctx := context.Background()
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, before, ns)
	oldCtl := startController(t, c, before)

	applyScenario(t, c, `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: change, namespace: argo-rollouts}
spec:
  replicas: 1
  selector: {matchLabels: {app: change}}
  strategy:
    canary:
      steps:
      - plugin: {name: step/e2e-test, config: {return: Successful}}
      - plugin: {name: step/e2e-test-added, config: {return: Successful}}
  template:
    metadata: {labels: {app: change}}
    spec:
      containers: [{name: app, image: example.invalid/app:v1}]
`)
	waitHealthy(t, c, ns, "change", time.Minute)
	setImage(t, c, "change", "example.invalid/app:v2")
	const missing = "plugin step/e2e-test-added not configured in configmap"
	if err := oldCtl.WaitForLog(ctx, missing, time.Minute); err != nil {
		t.Fatalf("the controller without the new plugin: %v", err)
	}
	// Its status patches make it retry at once a few times; then it waits
	// 30 s. Let that settle, so that a later error comes from a later
	// reconcile.
	settled, quietSince := strings.Count(oldCtl.Log(), missing), time.Now()
	waitFor(t, time.Minute, "the old controller's retries to settle", func() (bool, error) {
		if n := strings.Count(oldCtl.Log(), missing); n != settled {
			settled, quietSince = n, time.Now()
		}
		return time.Since(quietSince) > 3*time.Second, nil
	})

	deps := c.Kube.AppsV1().Deployments(ns)
	depBefore, err := deps.Get(ctx, "argo-rollouts", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, after, ns)
	depAfter, err := deps.Get(ctx, "argo-rollouts", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := depAfter.Spec.Template.Annotations[checksumAnnotation]; got != sums["after"] {
		t.Fatalf("Deployment in the cluster: %s %s, want %s", checksumAnnotation, got, sums["after"])
	}
	if depAfter.Generation <= depBefore.Generation || reflect.DeepEqual(depAfter.Spec.Template, depBefore.Spec.Template) {
		t.Fatalf("applying the change left the pod template as it was (generation %d -> %d): the Deployment would not roll",
			depBefore.Generation, depAfter.Generation)
	}

	// The running controller never rereads the ConfigMap: make it reconcile
	// the Rollout again (an annotation; its own retry comes after 30 s) and
	// see the plugin still missing.
	seen := strings.Count(oldCtl.Log(), missing)
	if _, err := c.Dynamic.Resource(rolloutsGVR).Namespace(ns).Patch(ctx, "change", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"e2e.rollouts-render.test/after-configmap-change":"1"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the old controller to reconcile again after the ConfigMap change", func() (bool, error) {
		return strings.Count(oldCtl.Log(), missing) > seen, nil
	})
	if _, err := os.Stat(filepath.Join(oldCtl.Dir, "plugin-bin", "step", "e2e-test-added")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old controller installed the new plugin after all (stat: %v)", err)
	}

	// The roll: RollingUpdate with one replica surges one new pod, then
	// ends the old one. Leader election hands over when the old lease lapses.
	depObj, err := toUnstructured(depAfter)
	if err != nil {
		t.Fatal(err)
	}
	newCtl := launchController(t, c, depObj)
	if err := newCtl.WaitForLog(ctx, "plugin-bin/step/e2e-test-added", 2*time.Minute); err != nil {
		t.Fatalf("the new controller did not install the new plugin: %v", err)
	}
	if !hasLine(newCtl.Log(), "Copied plugin from ", "plugins/step-plugin-e2e", "plugin-bin/step/e2e-test-added") {
		t.Errorf("no \"Copied plugin from …plugins/step-plugin-e2e to …plugin-bin/step/e2e-test-added\" line in the new controller's log")
	}
	start := time.Now()
	oldCtl.Stop()
	if err := newCtl.WaitForLog(ctx, "Started controller", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("new controller took over %s after the old one stopped", time.Since(start).Round(time.Millisecond))

	waitHealthy(t, c, ns, "change", 2*time.Minute)
	ro, err := getRollout(c, ns, "change")
	if err != nil {
		t.Fatal(err)
	}
	sts, _, _ := unstructured.NestedSlice(ro.Object, "status", "canary", "stepPluginStatuses")
	var ran []string
	for _, s := range sts {
		m, _ := s.(map[string]any)
		ran = append(ran, m["name"].(string)+"="+stringOf(m["phase"]))
	}
	if !slices.Contains(ran, "step/e2e-test-added=Successful") {
		t.Errorf("stepPluginStatuses %v, want step/e2e-test-added Successful", ran)
	}
	if strings.Contains(newCtl.Log(), missing) {
		t.Errorf("the new controller logged %q", missing)
	}
	cmds, err := newCtl.PluginCommandLines()
	if err != nil {
		t.Fatal(err)
	}
	if args, ok := cmds["step/e2e-test-added"]; !ok || !slices.Equal(args, []string{"--e2e-marker", "change-after"}) {
		t.Errorf("plugin processes %v: want step/e2e-test-added started with the args of change-after.yaml", cmds)
	}
}

// configChecksum is the README's definition of the checksum annotation:
// SHA-256 over every ConfigMap data key in sorted order, key then value,
// each preceded by its length in bytes as an 8-byte big-endian integer.
func configChecksum(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		for _, s := range []string{k, data[k]} {
			h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(s))))
			h.Write([]byte(s))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func configMapData(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	cm := Find(objs, "ConfigMap", "argo-rollouts-config")
	if cm == nil {
		t.Fatal("no ConfigMap argo-rollouts-config in the output")
	}
	data, _, err := unstructured.NestedStringMap(cm.Object, "data")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func podChecksum(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	dep := Find(objs, "Deployment", "argo-rollouts")
	if dep == nil {
		t.Fatal("no Deployment argo-rollouts in the output")
	}
	ann, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "annotations")
	if ann[checksumAnnotation] == "" {
		t.Fatalf("the Deployment's pod template has no %s annotation", checksumAnnotation)
	}
	return ann[checksumAnnotation]
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
