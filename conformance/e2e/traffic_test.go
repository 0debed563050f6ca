package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// gatewayScenario: Services, an HTTPRoute sending everything to stable, and
// a Rollout routed through the Gateway API plugin that pauses at 30%.
const gatewayScenario = `
apiVersion: v1
kind: Service
metadata: {name: web-stable, namespace: argo-rollouts}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web-canary, namespace: argo-rollouts}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: argo-rollouts}
spec:
  parentRefs: [{name: gateway}]
  rules:
  - backendRefs:
    - {name: web-stable, port: 80, weight: 100}
    - {name: web-canary, port: 80, weight: 0}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: argo-rollouts}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  strategy:
    canary:
      stableService: web-stable
      canaryService: web-canary
      trafficRouting:
        plugins:
          argoproj-labs/gatewayAPI: {httpRoute: web, namespace: argo-rollouts}
      steps:
      - setWeight: 30
      - pause: {}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: example.invalid/web:v1}]
`

// TestTrafficPluginGatewayAPI (testdata/e2e/traffic.yaml): at setWeight 30
// the Gateway API plugin (this repo's stand-in, tools/gatewayapi-standin,
// under the real plugin's name: the real module is not
// served by the module proxy here), running with the rendered
// ServiceAccount's identity and the rules the RolloutManager gave it, sets
// the HTTPRoute backends to 70/30 and marks the route in progress; after
// promotion the route is back to 100/0.
func TestTrafficPluginGatewayAPI(t *testing.T) {
	t.Parallel()
	forEachSource(t, "traffic.yaml", func(t *testing.T, c *Cluster, ctl *Controller) {
		applyScenario(t, c, gatewayScenario)
		waitHealthy(t, c, ns, "web", time.Minute)
		setImage(t, c, "web", "example.invalid/web:v2")
		waitRouteWeights(t, c, "web", 70, 30, true)
		waitFor(t, time.Minute, "rollout web paused at step 2", func() (bool, error) {
			ro, err := getRollout(c, ns, "web")
			if err != nil {
				return false, err
			}
			pcs, _, _ := unstructured.NestedSlice(ro.Object, "status", "pauseConditions")
			return len(pcs) > 0, nil
		})
		promote(t, c, "web")
		waitHealthy(t, c, ns, "web", 2*time.Minute)
		waitRouteWeights(t, c, "web", 100, 0, false)
	})
}

// TestTrafficPluginNeedsItsRules (testdata/e2e/traffic-without-rules.yaml):
// the same plugin without rules runs with only the controller's base role,
// so already the initial deploy's route update is Forbidden and the route
// never changes. This is what the RolloutManager's per-plugin `rules` are
// for, and what rollouts-render warns about when they are missing (the
// rendered subtest requires that warning; see expectedWarnings).
func TestTrafficPluginNeedsItsRules(t *testing.T) {
	t.Parallel()
	forEachSource(t, "traffic-without-rules.yaml", func(t *testing.T, c *Cluster, ctl *Controller) {
		applyScenario(t, c, gatewayScenario)
		// The stand-in reports the refusal as a TrafficRoutingError event; the real plugin
		// (v0.15.0, tried by hand) fails earlier, while removing managed routes, which the
		// controller only logs. Either shows the plugin's request was Forbidden.
		forbidden := `cannot get resource "httproutes"`
		// In the controller's text log the quotes are escaped.
		logged := strings.ReplaceAll(forbidden, `"`, `\"`)
		waitFor(t, time.Minute, "the plugin's httproutes request refused as forbidden (event or controller log)", func() (bool, error) {
			if strings.Contains(ctl.Log(), logged) {
				return true, nil
			}
			evs, err := c.Kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, e := range evs.Items {
				if e.Reason == "TrafficRoutingError" && strings.Contains(e.Message, "forbidden") &&
					strings.Contains(e.Message, forbidden) {
					return true, nil
				}
			}
			return false, nil
		})
		if stable, canary, _ := routeWeights(t, c, "web"); stable != 100 || canary != 0 {
			t.Errorf("route weights %d/%d, want unchanged 100/0", stable, canary)
		}
	})
}

// nginxScenario: upstream's in-tree sample traffic router (real
// upstream code) manages a canary Ingress next to the stable one.
const nginxScenario = `
apiVersion: v1
kind: Service
metadata: {name: shop-stable, namespace: argo-rollouts}
spec:
  selector: {app: shop}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: shop-canary, namespace: argo-rollouts}
spec:
  selector: {app: shop}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: argo-rollouts}
spec:
  ingressClassName: nginx
  rules:
  - host: shop.example
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: shop-stable, port: {number: 80}}}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: shop, namespace: argo-rollouts}
spec:
  replicas: 1
  selector: {matchLabels: {app: shop}}
  strategy:
    canary:
      stableService: shop-stable
      canaryService: shop-canary
      trafficRouting:
        plugins:
          argoproj/sample-nginx: {stableIngress: shop}
      steps:
      - setWeight: 30
      - pause: {}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers: [{name: app, image: example.invalid/shop:v1}]
`

// TestTrafficPluginSampleNginx (testdata/e2e/traffic-sample-nginx.yaml): at
// setWeight 30 the sample plugin creates the canary Ingress with
// canary-weight 30 (ingresses are in the base role).
func TestTrafficPluginSampleNginx(t *testing.T) {
	t.Parallel()
	forEachSource(t, "traffic-sample-nginx.yaml", func(t *testing.T, c *Cluster, ctl *Controller) {
		applyScenario(t, c, nginxScenario)
		waitHealthy(t, c, ns, "shop", time.Minute)
		setImage(t, c, "shop", "example.invalid/shop:v2")
		waitFor(t, time.Minute, "canary ingress with weight 30", func() (bool, error) {
			ing, err := c.Kube.NetworkingV1().Ingresses(ns).Get(context.Background(), "shop-shop-canary", metav1.GetOptions{})
			if err != nil {
				return false, client404(err)
			}
			return ing.Annotations["nginx.ingress.kubernetes.io/canary-weight"] == "30", nil
		})
	})
}

func applyScenario(t *testing.T, c *Cluster, y string) {
	t.Helper()
	objs, err := DecodeStream([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, objs, ns)
}

// promote does what `kubectl argo rollouts promote` does for a step pause
// (clear status.pauseConditions through the status subresource).
func promote(t *testing.T, c *Cluster, name string) {
	t.Helper()
	mutateRollout(t, c, name, "status", `{"status":{"pauseConditions":null}}`, func(ro *unstructured.Unstructured) bool {
		phase, _ := rolloutPhase(ro)
		return phase != "Paused"
	})
}

// routeWeights reads the first rule's stable/canary backend weights and
// whether the in-progress label is set.
func routeWeights(t *testing.T, c *Cluster, name string) (stable, canary int64, inProgress bool) {
	t.Helper()
	route, err := c.Dynamic.Resource(HTTPRouteGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	rule, _ := rules[0].(map[string]any)
	refs, _ := rule["backendRefs"].([]any)
	for _, r := range refs {
		m, _ := r.(map[string]any)
		w, _ := m["weight"].(int64)
		switch {
		case strings.HasSuffix(m["name"].(string), "-stable"):
			stable = w
		case strings.HasSuffix(m["name"].(string), "-canary"):
			canary = w
		}
	}
	_, inProgress = route.GetLabels()["rollouts.argoproj.io/gatewayapi-canary"]
	return stable, canary, inProgress
}

func waitRouteWeights(t *testing.T, c *Cluster, name string, wantStable, wantCanary int64, wantLabel bool) {
	t.Helper()
	waitFor(t, time.Minute, "httproute weights", func() (bool, error) {
		s, cn, l := routeWeights(t, c, name)
		return s == wantStable && cn == wantCanary && l == wantLabel, nil
	})
}

// client404 treats NotFound as "not yet".
func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
