package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// albScenario: an Ingress of class alb whose rule sends to the stable
// Service's action, and a Rollout routed by the controller's own ALB
// traffic routing (no plugin; with the default flags it calls no AWS API).
const albScenario = `
apiVersion: v1
kind: Service
metadata: {name: alb-stable, namespace: argo-rollouts}
spec:
  selector: {app: alb}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: alb-canary, namespace: argo-rollouts}
spec:
  selector: {app: alb}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: alb, namespace: argo-rollouts}
spec:
  ingressClassName: alb
  rules:
  - http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: alb-stable, port: {name: use-annotation}}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: alb, namespace: argo-rollouts}
spec:
  replicas: 1
  selector: {matchLabels: {app: alb}}
  strategy:
    canary:
      stableService: alb-stable
      canaryService: alb-canary
      trafficRouting:
        alb: {ingress: alb, servicePort: 80}
      steps:
      - setWeight: 50
      - pause: {}
  template:
    metadata: {labels: {app: alb}}
    spec:
      containers: [{name: app, image: example.invalid/alb:v1}]
`

const (
	albAction  = "alb.ingress.kubernetes.io/actions.alb-stable"
	albManaged = "rollouts.argoproj.io/managed-alb-annotations"
)

// operatorIngressVerbs are the argo-rollouts-manager operator's verbs on
// ingresses (its role lacks upstream's update).
var operatorIngressVerbs = []any{"create", "get", "list", "watch", "patch"}

// TestALBCanary is the proof for the README's RBAC difference: ingresses get
// upstream's `update`. A canary routed by the controller's ALB support goes
// 50/50, then to 100% on promotion under the rendered role; every weight
// change is a patch, which the operator's role allows too. When the Rollout
// is deleted, the controller's ingress controller resets the Ingress's ALB
// action to the stable Service and drops its managed-actions annotation with
// an Update (argo-rollouts ingress/alb.go): under the rendered role that
// succeeds, under the operator's ingress verbs it is Forbidden and the
// Ingress keeps the action of a Rollout that no longer exists.
func TestALBCanary(t *testing.T) {
	t.Parallel()
	for _, variant := range []string{"rendered", "operator-ingress-verbs"} {
		t.Run(variant, func(t *testing.T) {
			objs := renderObjs(t, "alb.yaml")
			role := Find(objs, "ClusterRole", "argo-rollouts")
			rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
			found := false
			for _, r := range rules {
				m := r.(map[string]any)
				if slices.Contains(m["resources"].([]any), any("ingresses")) {
					found = true
					if !slices.Contains(m["verbs"].([]any), any("update")) {
						t.Fatalf("the rendered ingresses rule has no update: %v", m["verbs"])
					}
					if variant != "rendered" {
						m["verbs"] = operatorIngressVerbs
					}
				}
			}
			if !found {
				t.Fatal("the rendered role has no ingresses rule")
			}
			if err := unstructured.SetNestedSlice(role.Object, rules, "rules"); err != nil {
				t.Fatal(err)
			}

			c := newCluster(t, release(t, DefaultVersion))
			ctx := context.Background()
			if err := c.EnsureNamespace(ctx, ns); err != nil {
				t.Fatal(err)
			}
			applyTwice(t, c, objs, ns)
			ctl := startController(t, c, objs)
			applyScenario(t, c, albScenario)
			waitHealthy(t, c, ns, "alb", time.Minute)
			setImage(t, c, "alb", "example.invalid/alb:v2")
			waitALBWeights(t, c, 50, 50)
			promote(t, c, "alb")
			waitHealthy(t, c, ns, "alb", 2*time.Minute)
			waitALBWeights(t, c, 100, 0)
			if strings.Contains(ctl.Log(), "forbidden") {
				t.Errorf("the controller was refused something during the canary:\n%s", grepLines(ctl.Log(), "forbidden"))
			}

			ing, err := c.Kube.NetworkingV1().Ingresses(ns).Get(ctx, "alb", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(ing.Annotations[albManaged], `"alb":`) {
				t.Fatalf("the Ingress's %s is %q; want the Rollout's managed action", albManaged, ing.Annotations[albManaged])
			}

			// Delete only once the controller is idle: v1.9.1 writes a Rollout it just
			// patched back into its informer cache, and a deletion in that moment leaves
			// the deleted Rollout in the cache (argoproj/argo-rollouts#4694), where the
			// ingress controller would still find it.
			quiet, quietSince := len(ctl.Log()), time.Now()
			waitFor(t, time.Minute, "the controller to settle", func() (bool, error) {
				if n := len(ctl.Log()); n != quiet {
					quiet, quietSince = n, time.Now()
				}
				return time.Since(quietSince) > 3*time.Second, nil
			})
			if err := c.Dynamic.Resource(rolloutsGVR).Namespace(ns).Delete(ctx, "alb", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			// The ingress controller acts on Ingress events (and on every Ingress when
			// the controller starts); any later edit of the Ingress is one. It looks the
			// Rollouts up in its informer cache, which may not have seen the deletion
			// yet: edit again every few seconds until the controller acts.
			touches := 0
			touch := func() {
				touches++
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"example.com/touched":"%d"}}}`, touches)
				if _, err := c.Kube.NetworkingV1().Ingresses(ns).Patch(ctx, "alb", types.MergePatchType,
					[]byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			lastTouch := time.Now()
			touch()
			retouch := func() {
				if time.Since(lastTouch) > 3*time.Second {
					touch()
					lastTouch = time.Now()
				}
			}
			forbidden := `ingresses.networking.k8s.io \"alb\" is forbidden: User \"system:serviceaccount:argo-rollouts:argo-rollouts\" cannot update resource \"ingresses\"`
			if variant == "rendered" {
				waitFor(t, time.Minute, "the Ingress's managed ALB action released", func() (bool, error) {
					retouch()
					ing, err := c.Kube.NetworkingV1().Ingresses(ns).Get(ctx, "alb", metav1.GetOptions{})
					if err != nil {
						return false, err
					}
					_, managed := ing.Annotations[albManaged]
					return !managed, nil
				})
				if stable, canary := albWeights(t, c); stable != 100 || canary != 0 {
					t.Errorf("after the release the action sends %d/%d, want 100/0", stable, canary)
				}
				if strings.Contains(ctl.Log(), "forbidden") {
					t.Errorf("the controller was refused something:\n%s", grepLines(ctl.Log(), "forbidden"))
				}
				return
			}
			waitFor(t, time.Minute, "the ingress update refused as Forbidden", func() (bool, error) {
				retouch()
				return strings.Contains(ctl.Log(), forbidden), nil
			})
			ing, err = c.Kube.NetworkingV1().Ingresses(ns).Get(ctx, "alb", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, managed := ing.Annotations[albManaged]; !managed {
				t.Error("the Ingress lost its managed-actions annotation although the update was refused")
			}
			t.Logf("under the operator's verbs: %s", firstLine(grepLines(ctl.Log(), forbidden)))
		})
	}
}

// albWeights reads the stable and canary weights of the Ingress's ALB action.
func albWeights(t *testing.T, c *Cluster) (stable, canary int64) {
	t.Helper()
	ing, err := c.Kube.NetworkingV1().Ingresses(ns).Get(context.Background(), "alb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		ForwardConfig struct {
			TargetGroups []struct {
				ServiceName string `json:"serviceName"`
				Weight      *int64 `json:"weight"`
			} `json:"targetGroups"`
		} `json:"forwardConfig"`
	}
	raw, ok := ing.Annotations[albAction]
	if !ok {
		return -1, -1
	}
	if err := json.Unmarshal([]byte(raw), &action); err != nil {
		t.Fatalf("%s: %v", albAction, err)
	}
	for _, tg := range action.ForwardConfig.TargetGroups {
		w := int64(0)
		if tg.Weight != nil {
			w = *tg.Weight
		}
		switch tg.ServiceName {
		case "alb-stable":
			stable = w
		case "alb-canary":
			canary = w
		}
	}
	return stable, canary
}

func waitALBWeights(t *testing.T, c *Cluster, stable, canary int64) {
	t.Helper()
	waitFor(t, time.Minute, "ALB action weights", func() (bool, error) {
		s, cn := albWeights(t, c)
		return s == stable && cn == canary, nil
	})
}

// grepLines returns the lines of log that contain substr.
func grepLines(log, substr string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
