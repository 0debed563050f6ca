package conformance

import (
	"context"
	"fmt"
	"testing"

	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	rolloutsvalidation "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/validation"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
)

// typedScheme knows every Go type an object of the output may decode into:
// the built-in API (k8s.io/api), Argo Rollouts' v1alpha1 and the
// prometheus-operator's monitoring/v1 (ServiceMonitor).
var typedScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(rolloutsv1alpha1.AddToScheme(s))
	utilruntime.Must(monitoringv1.AddToScheme(s))
	return s
}()

// strictYAML is apimachinery's serializer in strict mode, as the API server
// decodes a request with fieldValidation=Strict: duplicate keys (sigs.k8s.io/yaml
// YAMLToJSONStrict), unknown and duplicate fields (sigs.k8s.io/json,
// case-sensitive) are errors.
var strictYAML = serjson.NewSerializerWithOptions(serjson.DefaultMetaFactory, typedScheme, typedScheme,
	serjson.SerializerOptions{Yaml: true, Strict: true})

// apiServerStrategies are the API server's own registry strategies for the
// built-in kinds the renderer generates (PrepareForCreate, Validate,
// WarningsOnCreate), run by apiServerCreate as a create request would.
var apiServerStrategies = map[schema.GroupKind]rest.RESTCreateStrategy{
	{Group: "", Kind: "ServiceAccount"}:                              serviceaccount.Strategy,
	{Group: "", Kind: "ConfigMap"}:                                   configmap.Strategy,
	{Group: "", Kind: "Secret"}:                                      secret.Strategy,
	{Group: "", Kind: "Service"}:                                     service.Strategy,
	{Group: "apps", Kind: "Deployment"}:                              deployment.Strategy,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               role.Strategy,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        clusterrole.Strategy,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        rolebinding.Strategy,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: clusterrolebinding.Strategy,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:              networkpolicy.Strategy,
}

// ownedNames are the objects the renderer creates (DESIGN §4); anything else
// is a passed-through input document.
var ownedNames = map[string]bool{
	"argo-rollouts": true, "argo-rollouts-config": true, "argo-rollouts-metrics": true,
	"argo-rollouts-notification-secret": true, "argo-rollouts-network-policy": true,
	"argo-rollouts-aggregate-to-admin": true, "argo-rollouts-aggregate-to-edit": true,
	"argo-rollouts-aggregate-to-view": true,
}

type warnings []string

func (w *warnings) AddWarning(_, text string) { *w = append(*w, text) }

// checkKubernetes decodes every document strictly into its Go type and runs
// the API server's create-time validation where the library has it. notes
// say what could not be checked.
func checkKubernetes(data []byte) (problems, notes []string) {
	docs, err := splitYAMLDocs(data)
	if err != nil {
		return []string{fmt.Sprintf("splitting documents: %v", err)}, nil
	}
	for i, doc := range docs {
		obj, gvk, err := strictYAML.Decode(doc, nil, nil)
		if runtime.IsNotRegisteredError(err) {
			// No Go type: still refuse duplicate keys, and say what was skipped.
			u := &unstructured.Unstructured{}
			if _, _, err := strictYAML.Decode(doc, nil, u); err != nil {
				problems = append(problems, fmt.Sprintf("document %d: %v", i, err))
			}
			notes = append(notes, fmt.Sprintf("document %d: %s has no Go type here; checked for duplicate keys only", i, u.GroupVersionKind()))
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("document %d (%v): strict decoding: %v", i, gvk, err))
			continue
		}
		acc, err := meta.Accessor(obj)
		if err != nil {
			problems = append(problems, fmt.Sprintf("document %d: %v", i, err))
			continue
		}
		label := fmt.Sprintf("document %d (%s %s/%s)", i, gvk.Kind, acc.GetNamespace(), acc.GetName())
		owned := ownedNames[acc.GetName()]
		errs, warns := validateObject(obj, gvk, owned)
		for _, e := range errs {
			problems = append(problems, fmt.Sprintf("%s: %v", label, e))
		}
		for _, w := range warns {
			if owned {
				problems = append(problems, fmt.Sprintf("%s: API server warning: %s", label, w))
			} else {
				notes = append(notes, fmt.Sprintf("%s (passed through): API server warning: %s", label, w))
			}
		}
	}
	return problems, notes
}

// validateObject returns validation errors and API server warnings.
func validateObject(obj runtime.Object, gvk *schema.GroupVersionKind, owned bool) ([]error, []string) {
	obj = obj.DeepCopyObject()
	acc, _ := meta.Accessor(obj)
	namespaced := !clusterScoped[gvk.GroupKind()]
	if namespaced && acc.GetNamespace() == "" && !owned {
		// A passed-through object may leave the namespace to Argo CD / kubectl.
		acc.SetNamespace(defaultNamespace)
	}
	if strategy, ok := apiServerStrategies[gvk.GroupKind()]; ok {
		return apiServerCreate(strategy, obj, gvk)
	}
	var errs field.ErrorList
	errs = append(errs, apimachineryvalidation.ValidateObjectMetaAccessor(acc, namespaced,
		apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	if ro, ok := obj.(*rolloutsv1alpha1.Rollout); ok {
		// The check the rollouts controller runs before reconciling.
		errs = append(errs, rolloutsvalidation.ValidateRollout(ro)...)
	}
	return toErrors(errs), nil
}

// clusterScoped kinds among those the scheme knows and the output may hold.
var clusterScoped = map[schema.GroupKind]bool{
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
	{Group: "", Kind: "Namespace"}:                                   true,
	{Group: "argoproj.io", Kind: "ClusterAnalysisTemplate"}:          true,
}

// apiServerCreate mirrors the API server's create path: defaulting of the
// versioned object, conversion to the internal version, system metadata,
// then rest.BeforeCreate (namespace check, PrepareForCreate, Validate,
// ObjectMeta validation, WarningsOnCreate).
func apiServerCreate(strategy rest.RESTCreateStrategy, obj runtime.Object, gvk *schema.GroupVersionKind) ([]error, []string) {
	legacyscheme.Scheme.Default(obj)
	internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return []error{fmt.Errorf("conversion to the internal version: %w", err)}, nil
	}
	acc, err := meta.Accessor(internal)
	if err != nil {
		return []error{err}, nil
	}
	rest.FillObjectMetaSystemFields(acc)
	var w warnings
	ctx := genericapirequest.WithNamespace(context.Background(), acc.GetNamespace())
	ctx = warning.WithWarningRecorder(ctx, &w)
	if err := rest.BeforeCreate(strategy, ctx, internal); err != nil {
		return []error{err}, w
	}
	return nil, w
}

func toErrors(list field.ErrorList) []error {
	out := make([]error, 0, len(list))
	for _, e := range list {
		out = append(out, e)
	}
	return out
}

func TestKubernetesAcceptsObjects(t *testing.T) {
	forEachStream(t, func(t *testing.T, s *stream) {
		problems, notes := checkKubernetes(s.yaml)
		report(t, problems)
		for _, n := range notes {
			t.Log(n)
		}
	})
}
