package e2e

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var rolloutManagersGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rolloutmanagers"}

// operatorManager is the field manager the operator's writes are recorded under.
const operatorManager = "argo-rollouts-manager"

// operatorObjects turns a rendering of a RolloutManager into the objects the
// argo-rollouts-manager operator creates for it: the README's deliberate
// differences undone (the Deployment's selector is the pod labels, the pod
// template has no checksum, the role has the operator's ingresses and
// deployments verbs, the ConfigMap comes from a rendering with
// --openshift-route-plugin, the operator's always-on plugin), and every
// namespaced object owned by the RolloutManager (controller reference).
func operatorObjects(t *testing.T, objs []*unstructured.Unstructured, owner *unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range objs {
		o = o.DeepCopy()
		switch {
		case o.GetKind() == "Deployment":
			labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
			if err := unstructured.SetNestedStringMap(o.Object, labels, "spec", "selector", "matchLabels"); err != nil {
				t.Fatal(err)
			}
			unstructured.RemoveNestedField(o.Object, "spec", "template", "metadata", "annotations", checksumAnnotation)
		case o.GetKind() == "ClusterRole" && o.GetName() == "argo-rollouts":
			rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
			for _, r := range rules {
				m := r.(map[string]any)
				switch res := m["resources"].([]any); {
				case slices.Contains(res, any("ingresses")):
					m["verbs"] = operatorIngressVerbs
				case slices.Contains(res, any("deployments")):
					m["verbs"] = []any{"get", "list", "watch", "update", "patch"}
				}
			}
			if err := unstructured.SetNestedSlice(o.Object, rules, "rules"); err != nil {
				t.Fatal(err)
			}
		}
		if o.GetNamespace() != "" {
			o.SetOwnerReferences([]metav1.OwnerReference{{
				APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(),
				Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}})
		}
		out = append(out, o)
	}
	return out
}

// TestMigrationFromOperator follows the README's migration steps from an
// installation the operator made: a RolloutManager with
// additionalMetadata.labels (so the operator's Deployment selector differs
// from ours) and a step plugin, every namespaced object owned by it.
//
//  1. `kubectl get rolloutmanager -o yaml` is the input that is rendered;
//  2. `kubectl delete rolloutmanager … --cascade=orphan`: the objects stay and
//     lose their ownerReferences (played by the harness for the garbage
//     collector, which does not run here, see gcOrphan);
//  3. `kubectl delete deployment argo-rollouts` (its selector cannot change);
//  4. `rollouts-render render … | kubectl apply --server-side --force-conflicts -f -`
//     (without --force-conflicts kubectl refuses, naming the operator's fields).
//
// Rollouts keep being reconciled (a Rollout of the operator's time rolls a
// new revision through the plugin step), and nothing is left behind: the
// RolloutManager is gone, no object has an owner, and the ConfigMap data,
// the role's rules and the Deployment's selector and labels are the
// rendering's (no OpenShift plugin, upstream's verbs).
func TestMigrationFromOperator(t *testing.T) {
	t.Parallel()
	bin, err := RenderBinary()
	if err != nil || bin == "" {
		t.Fatalf("ROLLOUTS_RENDER: %v (%q)", err, bin)
	}
	crd, _, err := RunRender(bin, "crd")
	if err != nil {
		t.Fatal(err)
	}
	crdObjs, err := DecodeStream(crd)
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, release(t, DefaultVersion))
	ctx := context.Background()
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// The RolloutManager CRD (ours is a drop-in replacement for the operator's; conformance/ checks it).
	applyTwice(t, c, crdObjs, "")
	waitFor(t, time.Minute, "the RolloutManager CRD", func() (bool, error) {
		live, err := c.Dynamic.Resource(crdGVR).Get(ctx, "rolloutmanagers.argoproj.io", metav1.GetOptions{})
		return err == nil && crdEstablished(live), client404(err)
	})

	rmYAML, err := os.ReadFile(TestdataPath("migration.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rm := mustDecodeOne(t, string(rmYAML))
	owner, err := c.Dynamic.Resource(rolloutManagersGVR).Namespace(ns).Create(ctx, rm, metav1.CreateOptions{FieldManager: operatorManager})
	if err != nil {
		t.Fatal(err)
	}
	// The operator's always-on OpenShift plugin, at a location in the "image": its
	// release URL cannot be downloaded here.
	opObjs := operatorObjects(t, renderObjs(t, "migration.yaml", "--openshift-route-plugin=file://plugins/trafficrouter-plugin-sample"), owner)
	for _, o := range opObjs {
		m, err := c.RESTMapping(o.GetAPIVersion(), o.GetKind())
		if err != nil {
			t.Fatal(err)
		}
		ri := c.Dynamic.Resource(m.Resource)
		var created *unstructured.Unstructured
		if o.GetNamespace() != "" {
			created, err = ri.Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{FieldManager: operatorManager})
		} else {
			created, err = ri.Create(ctx, o, metav1.CreateOptions{FieldManager: operatorManager})
		}
		if err != nil {
			t.Fatalf("create the operator's %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		*o = *created
	}
	opCtl := startLiveController(t, c)
	applyScenario(t, c, canaryRollout("migrated", "[{plugin: {name: step/e2e-test, config: {return: Successful}}}]"))
	waitHealthy(t, c, ns, "migrated", time.Minute)

	// 1. The RolloutManager as stored is the input (status and server metadata are accepted).
	got, err := c.Kubectl(ctx, "get", "rolloutmanager", "rollouts", "-n", ns, "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(t.TempDir(), "rolloutmanager.yaml")
	if err := os.WriteFile(input, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
	rendered, _, err := RunRender(bin, "render", input)
	if err != nil {
		t.Fatal(err)
	}
	want, err := DecodeStream(rendered)
	if err != nil {
		t.Fatal(err)
	}

	// 2. The operator's RolloutManager goes, its objects stay.
	if _, err := c.Kubectl(ctx, "delete", "rolloutmanager", "rollouts", "-n", ns, "--cascade=orphan", "--wait=false"); err != nil {
		t.Fatal(err)
	}
	c.gcOrphan(t, owner)
	waitFor(t, time.Minute, "the RolloutManager deleted", func() (bool, error) {
		_, err := c.Dynamic.Resource(rolloutManagersGVR).Namespace(ns).Get(ctx, "rollouts", metav1.GetOptions{})
		return apierrors.IsNotFound(err), client404(err)
	})

	// 3. The operator's Deployment goes (its pod with it).
	if _, err := c.Kubectl(ctx, "delete", "deployment", "argo-rollouts", "-n", ns); err != nil {
		t.Fatal(err)
	}
	opCtl.Stop()

	// 4. The rendered output, server-side.
	applyCmd := []string{"apply", "--server-side", "-f", writeTemp(t, rendered)}
	if out, err := c.Kubectl(ctx, applyCmd...); err == nil || !strings.Contains(out, "conflict") {
		t.Errorf("kubectl apply --server-side without --force-conflicts over the operator's objects: %v; want conflicts\n%s", err, out)
	} else {
		t.Logf("without --force-conflicts:\n%s", grepLines(out, "conflict"))
	}
	if _, err := c.Kubectl(ctx, append(applyCmd, "--force-conflicts")...); err != nil {
		t.Fatal(err)
	}
	ctl := startLiveController(t, c)

	newRevision(t, c, "migrated", "example.invalid/migrated:v2", "")
	waitHealthy(t, c, ns, "migrated", 2*time.Minute)
	if !hasLine(ctl.Log(), "Reconciliation completed", "rollout=migrated") {
		t.Error("the new controller never reconciled the Rollout")
	}

	for _, o := range want {
		live, err := c.Get(ctx, o)
		if err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if refs := live.GetOwnerReferences(); len(refs) > 0 {
			t.Errorf("%s %s still has ownerReferences %v", o.GetKind(), o.GetName(), refs)
		}
		for _, path := range [][]string{{"data"}, {"rules"}, {"spec", "selector"}, {"spec", "template", "metadata"}, {"metadata", "labels"}} {
			w, wok, _ := unstructured.NestedFieldCopy(o.Object, path...)
			l, _, _ := unstructured.NestedFieldCopy(live.Object, path...)
			if wok && !reflect.DeepEqual(w, l) {
				t.Errorf("%s %s %s: %v after the migration, rendered %v", o.GetKind(), o.GetName(), strings.Join(path, "."), l, w)
			}
		}
	}
	for _, o := range opObjs {
		if Find(want, o.GetKind(), o.GetName()) == nil {
			t.Errorf("the operator's %s %s is not in the rendering: it would be left behind", o.GetKind(), o.GetName())
		}
	}
}

// gcOrphan does what the garbage collector (kube-controller-manager, not run
// here) does for an owner deleted with propagationPolicy Orphan: it removes
// the owner's ownerReferences from every dependent in the owner's namespace
// and every cluster-scoped object, then the owner's "orphan" finalizer, so
// the API server completes the deletion.
func (c *Cluster) gcOrphan(t *testing.T, owner *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	waitFor(t, 30*time.Second, "the orphan finalizer on the RolloutManager", func() (bool, error) {
		o, err := c.Dynamic.Resource(rolloutManagersGVR).Namespace(owner.GetNamespace()).Get(ctx, owner.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return slices.Contains(o.GetFinalizers(), metav1.FinalizerOrphanDependents), nil
	})
	lists, err := c.Kube.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "patch") {
				continue
			}
			ri := c.Dynamic.Resource(gv.WithResource(r.Name))
			var items *unstructured.UnstructuredList
			if r.Namespaced {
				items, err = ri.Namespace(owner.GetNamespace()).List(ctx, metav1.ListOptions{})
			} else {
				items, err = ri.List(ctx, metav1.ListOptions{})
			}
			if err != nil {
				t.Fatalf("list %s: %v", r.Name, err)
			}
			for _, it := range items.Items {
				var keep []metav1.OwnerReference
				for _, ref := range it.GetOwnerReferences() {
					if ref.UID != owner.GetUID() {
						keep = append(keep, ref)
					}
				}
				if len(keep) == len(it.GetOwnerReferences()) {
					continue
				}
				it.SetOwnerReferences(keep)
				if r.Namespaced {
					_, err = ri.Namespace(it.GetNamespace()).Update(ctx, &it, metav1.UpdateOptions{})
				} else {
					_, err = ri.Update(ctx, &it, metav1.UpdateOptions{})
				}
				if err != nil {
					t.Fatalf("orphan %s %s: %v", it.GetKind(), it.GetName(), err)
				}
			}
		}
	}
	o, err := c.Dynamic.Resource(rolloutManagersGVR).Namespace(owner.GetNamespace()).Get(ctx, owner.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o.SetFinalizers(slices.DeleteFunc(o.GetFinalizers(), func(f string) bool { return f == metav1.FinalizerOrphanDependents }))
	if _, err := c.Dynamic.Resource(rolloutManagersGVR).Namespace(owner.GetNamespace()).Update(ctx, o, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// writeTemp writes data to a file in the test's temporary directory.
func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
