// Command gatewayapi-standin is a minimal traffic-router plugin for the e2e
// tests, written here because the real Gateway API plugin
// (github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi) cannot
// be fetched through this project's module proxy. It is NOT that plugin: it
// reproduces only the part of its documented behaviour the scenarios check,
// so a test that passes with it says the rendered installation can run *a*
// Gateway API plugin, not that the real one works.
//
// Behaviour mirrored (plugin name argoproj-labs/gatewayAPI, Rollout config
// {httpRoute, namespace}): SetWeight gives the canary Service's backendRef
// weight W and the stable one's 100-W in every rule of the HTTPRoute,
// labels the route rollouts.argoproj.io/gatewayapi-canary=in-progress while
// W > 0, and writes it with Update. Like the real plugin it builds its own
// Kubernetes client from KUBECONFIG (the controller's identity), so it needs
// RBAC on httproutes that the controller's base role does not grant.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/rollout/trafficrouting/plugin/rpc"
	"github.com/argoproj/argo-rollouts/utils/plugin/types"
	goplugin "github.com/hashicorp/go-plugin"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

const (
	pluginName    = "argoproj-labs/gatewayAPI"
	progressLabel = "rollouts.argoproj.io/gatewayapi-canary"
)

var httpRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

type config struct {
	HTTPRoute string `json:"httpRoute"`
	Namespace string `json:"namespace"`
}

type router struct{ client dynamic.Interface }

var _ rpc.TrafficRouterPlugin = (*router)(nil)

func (r *router) InitPlugin() types.RpcError {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return types.RpcError{ErrorString: err.Error()}
	}
	if r.client, err = dynamic.NewForConfig(cfg); err != nil {
		return types.RpcError{ErrorString: err.Error()}
	}
	return types.RpcError{}
}

func (r *router) SetWeight(ro *v1alpha1.Rollout, weight int32, _ []v1alpha1.WeightDestination) types.RpcError {
	var c config
	if err := json.Unmarshal(ro.Spec.Strategy.Canary.TrafficRouting.Plugins[pluginName], &c); err != nil {
		return types.RpcError{ErrorString: fmt.Sprintf("plugin config: %v", err)}
	}
	ns := c.Namespace
	if ns == "" {
		ns = ro.Namespace
	}
	canary, stable := ro.Spec.Strategy.Canary.CanaryService, ro.Spec.Strategy.Canary.StableService
	routes := r.client.Resource(httpRoutes).Namespace(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		route, err := routes.Get(context.TODO(), c.HTTPRoute, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := setBackendWeights(route, canary, stable, weight); err != nil {
			return err
		}
		labels := route.GetLabels()
		if weight > 0 {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[progressLabel] = "in-progress"
		} else {
			delete(labels, progressLabel)
		}
		route.SetLabels(labels)
		_, err = routes.Update(context.TODO(), route, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return types.RpcError{ErrorString: err.Error()}
	}
	return types.RpcError{}
}

// setBackendWeights edits spec.rules[].backendRefs[] in place.
func setBackendWeights(route *unstructured.Unstructured, canary, stable string, weight int32) error {
	rules, _, err := unstructured.NestedSlice(route.Object, "spec", "rules")
	if err != nil {
		return err
	}
	for i, rule := range rules {
		rm, _ := rule.(map[string]any)
		refs, _ := rm["backendRefs"].([]any)
		var seenCanary, seenStable bool
		for _, ref := range refs {
			m, _ := ref.(map[string]any)
			switch m["name"] {
			case canary:
				m["weight"] = int64(weight)
				seenCanary = true
			case stable:
				m["weight"] = int64(100 - weight)
				seenStable = true
			}
		}
		if !seenCanary || !seenStable {
			return fmt.Errorf("httproute %s rule %d: backendRefs must name both %s and %s", route.GetName(), i, canary, stable)
		}
	}
	return unstructured.SetNestedSlice(route.Object, rules, "spec", "rules")
}

func (r *router) VerifyWeight(*v1alpha1.Rollout, int32, []v1alpha1.WeightDestination) (types.RpcVerified, types.RpcError) {
	return types.Verified, types.RpcError{}
}

func (r *router) UpdateHash(*v1alpha1.Rollout, string, string, []v1alpha1.WeightDestination) types.RpcError {
	return types.RpcError{}
}

func (r *router) SetHeaderRoute(*v1alpha1.Rollout, *v1alpha1.SetHeaderRoute) types.RpcError {
	return types.RpcError{}
}

func (r *router) SetMirrorRoute(*v1alpha1.Rollout, *v1alpha1.SetMirrorRoute) types.RpcError {
	return types.RpcError{}
}

func (r *router) RemoveManagedRoutes(*v1alpha1.Rollout) types.RpcError { return types.RpcError{} }

func (r *router) Type() string { return "GatewayAPI" }

func main() {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: goplugin.HandshakeConfig{
			ProtocolVersion:  1,
			MagicCookieKey:   "ARGO_ROLLOUTS_RPC_PLUGIN",
			MagicCookieValue: "trafficrouter",
		},
		Plugins: map[string]goplugin.Plugin{
			"RpcTrafficRouterPlugin": &rpc.RpcTrafficRouterPlugin{Impl: &router{}},
		},
	})
}
