package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// crdScheme is apiextensions.k8s.io as the API server registers it: the
// internal version, v1 and v1beta1, with their defaulting and conversions.
var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
}()

// strictCRDYAML decodes like the API server with fieldValidation=Strict:
// unknown fields, duplicate fields and duplicate keys are errors.
var strictCRDYAML = serjson.NewSerializerWithOptions(serjson.DefaultMetaFactory, crdScheme, crdScheme,
	serjson.SerializerOptions{Yaml: true, Strict: true})

// decodeCRD reads a stream holding exactly one apiextensions.k8s.io/v1
// CustomResourceDefinition, strictly, and applies the v1 defaults the API
// server applies before validation.
func decodeCRD(data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	docs, err := splitYAMLDocs(data)
	if err != nil {
		return nil, fmt.Errorf("splitting documents: %w", err)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("want exactly one document, got %d", len(docs))
	}
	obj, gvk, err := strictCRDYAML.Decode(docs[0], nil, nil)
	if err != nil {
		return nil, fmt.Errorf("strict decoding: %w", err)
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("want an apiextensions.k8s.io/v1 CustomResourceDefinition, got %v", gvk)
	}
	crdScheme.Default(crd)
	return crd, nil
}

var (
	ourCRDOnce sync.Once
	ourCRDObj  *apiextensionsv1.CustomResourceDefinition
	ourCRDErr  error
)

// ourCRD is `rollouts-render crd`, decoded strictly and defaulted.
func ourCRD(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out := renderOK(t, "crd") // outside the Once: a missing binary fails every caller
	ourCRDOnce.Do(func() {
		ourCRDObj, ourCRDErr = decodeCRD(out)
		if ourCRDErr == nil {
			// The command's output must not depend on anything but the binary.
			if again := renderOK(t, "crd"); string(again) != string(out) {
				ourCRDErr = errors.New("two runs of `rollouts-render crd` printed different bytes")
			}
		}
	})
	if ourCRDErr != nil {
		t.Fatalf("rollouts-render crd: %v", ourCRDErr)
	}
	return ourCRDObj.DeepCopy()
}

// createCRD runs the API server's create path for a CustomResourceDefinition:
// conversion of the defaulted v1 object to the internal version, system
// metadata, then rest.BeforeCreate with the apiextensions registry strategy
// (PrepareForCreate, Validate = validation.ValidateCustomResourceDefinition
// with the create options, ObjectMeta validation, WarningsOnCreate).
// Errors and warnings are returned as text, one per field error.
func createCRD(crd *apiextensionsv1.CustomResourceDefinition) (problems []string) {
	internal := &apiextensions.CustomResourceDefinition{}
	if err := crdScheme.Convert(crd.DeepCopy(), internal, nil); err != nil {
		return []string{fmt.Sprintf("conversion to the internal version: %v", err)}
	}
	rest.FillObjectMetaSystemFields(internal)
	var w warnings
	ctx := genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)
	ctx = warning.WithWarningRecorder(ctx, &w)
	if err := rest.BeforeCreate(customresourcedefinition.NewStrategy(crdScheme), ctx, internal); err != nil {
		problems = append(problems, statusProblems(err)...)
	} else {
		// BeforeCreate ran it already; called once more on the prepared
		// object so that a regression lists every field error by itself.
		for _, e := range crdvalidation.ValidateCustomResourceDefinition(ctx, internal) {
			problems = append(problems, e.Error())
		}
	}
	for _, text := range w {
		problems = append(problems, "API server warning: "+text)
	}
	return problems
}

// statusProblems spells out an API status error cause by cause.
func statusProblems(err error) []string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if d := status.Status().Details; d != nil && len(d.Causes) > 0 {
			out := make([]string, 0, len(d.Causes))
			for _, c := range d.Causes {
				out = append(out, fmt.Sprintf("%s: %s", c.Field, c.Message))
			}
			return out
		}
	}
	return []string{err.Error()}
}

// structuralProblems converts every version's schema to a structural schema
// and checks it as the API server does: schema.NewStructural, then
// ValidateStructural (structurality, the x-kubernetes-int-or-string and
// embedded-resource forms, metadata restrictions), then the defaults.
func structuralProblems(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var problems []string
	for i, v := range crd.Spec.Versions {
		path := field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema")
		s, err := structuralFor(crd, v.Name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		for _, e := range structuralschema.ValidateStructural(path, s) {
			problems = append(problems, e.Error())
		}
		errs, err := structuraldefaulting.ValidateDefaults(context.Background(), path, s, true, true)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: defaults: %v", path, err))
		}
		for _, e := range errs {
			problems = append(problems, e.Error())
		}
	}
	return problems
}

// internalSchema is a version's schema in the internal version, as the
// custom resource handler converts it.
func internalSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensions.JSONSchemaProps, error) {
	val, err := apihelpers.GetSchemaForVersion(crd, version)
	if err != nil {
		return nil, err
	}
	if val == nil || val.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("version %s has no openAPIV3Schema", version)
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema to the internal version: %w", err)
	}
	return internal.OpenAPIV3Schema, nil
}

func structuralFor(crd *apiextensionsv1.CustomResourceDefinition, version string) (*structuralschema.Structural, error) {
	internal, err := internalSchema(crd, version)
	if err != nil {
		return nil, err
	}
	return structuralschema.NewStructural(internal)
}

// TestCRDAcceptedByAPIServer: `rollouts-render crd` is a CustomResourceDefinition
// the API server creates without an error or a warning, whose schema is
// structural, and for which it can publish OpenAPI (kubectl explain).
func TestCRDAcceptedByAPIServer(t *testing.T) {
	crd := ourCRD(t)
	if crd.Name != "rolloutmanagers.argoproj.io" {
		t.Errorf("metadata.name = %q, want rolloutmanagers.argoproj.io", crd.Name)
	}
	if !slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
		return v.Name == "v1alpha1" && v.Served && v.Storage
	}) {
		t.Errorf("no served storage version v1alpha1")
	}
	t.Run("create", func(t *testing.T) { report(t, createCRD(crd)) })
	t.Run("structural", func(t *testing.T) { report(t, structuralProblems(crd)) })
	t.Run("openapi", func(t *testing.T) { report(t, openAPIProblems(crd)) })
}

// openAPIProblems builds the OpenAPI v2 and v3 documents the API server
// publishes for each served version (what kubectl explain and client-side
// validation read) and checks that spec.plugins is described there.
func openAPIProblems(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var problems []string
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if _, err := builder.BuildOpenAPIV2(crd, v.Name, builder.Options{V2: true}); err != nil {
			problems = append(problems, fmt.Sprintf("%s: OpenAPI v2: %v", v.Name, err))
		}
		doc, err := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: OpenAPI v3: %v", v.Name, err))
			continue
		}
		name := reverseGroup(crd.Spec.Group) + "." + v.Name + "." + crd.Spec.Names.Kind
		var root *spec.Schema
		if doc.Components != nil {
			root = doc.Components.Schemas[name]
		}
		if root == nil {
			problems = append(problems, fmt.Sprintf("%s: OpenAPI v3 has no schema %s", v.Name, name))
			continue
		}
		node := root
		for _, p := range []string{"spec", "plugins"} {
			child, ok := node.Properties[p]
			if !ok {
				// The API server publishes an empty schema for a CRD whose
				// schema is not structural: kubectl explain shows nothing.
				problems = append(problems, fmt.Sprintf("%s: the published OpenAPI v3 schema %s has no %s (kubectl explain would not describe it)", v.Name, name, p))
				break
			}
			node = &child
		}
	}
	return problems
}

// reverseGroup: argoproj.io -> io.argoproj, as OpenAPI definition names have it.
func reverseGroup(group string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".")
}

// crServer is the API server's handling of one custom resource version: the
// same validators, structural schema and registry strategy that
// apiextensions-apiserver's custom resource handler builds from the CRD.
type crServer struct {
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural
	strategy   rest.RESTCreateStrategy
}

func newCRServer(crd *apiextensionsv1.CustomResourceDefinition, version string) (*crServer, error) {
	internal, err := internalSchema(crd, version)
	if err != nil {
		return nil, err
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("schema validator: %w", err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("structural schema: %w", err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("pruning defaults: %w", err)
	}
	subresources, err := apihelpers.GetSubresourcesForVersion(crd, version)
	if err != nil {
		return nil, err
	}
	var status *apiextensions.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	if subresources != nil && subresources.Status != nil {
		status = &apiextensions.CustomResourceSubresourceStatus{}
		if p, ok := internal.Properties["status"]; ok {
			if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&p); err != nil {
				return nil, fmt.Errorf("status schema validator: %w", err)
			}
		}
	}
	var scale *apiextensions.CustomResourceSubresourceScale
	if subresources != nil && subresources.Scale != nil {
		scale = &apiextensions.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(subresources.Scale, scale, nil); err != nil {
			return nil, err
		}
	}
	var selectable []apiextensionsv1.SelectableField
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			selectable = v.SelectableFields
		}
	}
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind}
	strategy := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(),
		crd.Spec.Scope == apiextensionsv1.NamespaceScoped, gvk, validator, statusValidator, s, status, scale, selectable)
	return &crServer{gvk: gvk, structural: s, strategy: strategy}, nil
}

// crResult is what a create request for a custom resource would meet.
type crResult struct {
	// unknown are the field paths the API server prunes; with
	// fieldValidation=Strict (kubectl's default) each is an error.
	unknown []string
	// errs: decoding, schema, metadata, list-type and CEL errors, "path: message".
	errs []string
	// warnings the API server would send back.
	warnings []string
	// rewritten: the stored spec differs from the one sent, beyond pruning
	// (a null dropped, a default applied).
	rewritten bool
}

func (r crResult) ok() bool {
	return len(r.unknown)+len(r.errs)+len(r.warnings) == 0 && !r.rewritten
}

func (r crResult) String() string {
	var parts []string
	for _, u := range r.unknown {
		parts = append(parts, fmt.Sprintf("unknown field %q (pruned)", u))
	}
	parts = append(parts, r.errs...)
	for _, w := range r.warnings {
		parts = append(parts, "warning: "+w)
	}
	if r.rewritten {
		parts = append(parts, "the API server would store another spec than the one sent (a null dropped or a default applied)")
	}
	return strings.Join(parts, "; ")
}

// create mirrors a create request for obj (a JSON-like value) in namespace
// ns: the handler's unstructured schema coercer (ObjectMeta decoding,
// pruning with unknown-field tracking, removal of non-nullable nulls,
// embedded ObjectMeta coercion), structural defaulting, then
// rest.BeforeCreate with the custom resource strategy (schema validation,
// ObjectMeta, list-type and CEL validation, warnings).
func (c *crServer) create(obj map[string]any, ns string) crResult {
	var r crResult
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	sentSpec := runtime.DeepCopyJSONValue(obj["spec"])
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil || gv.WithKind(u.GetKind()) != c.gvk {
		r.errs = append(r.errs, fmt.Sprintf("apiVersion/kind %s %s: not %v (%v)", u.GetAPIVersion(), u.GetKind(), c.gvk, err))
		return r
	}
	objectMeta, foundMeta, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object,
		schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		r.errs = append(r.errs, fmt.Sprintf("metadata: %v", err))
		return r
	}
	r.unknown = append(r.unknown, metaUnknown...)
	r.unknown = append(r.unknown, structuralpruning.PruneWithOptions(u.Object, c.structural, true,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, c.structural)
	coerceErr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, c.structural, false,
		schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if coerceErr != nil {
		r.errs = append(r.errs, coerceErr.Error())
		return r
	}
	r.unknown = append(r.unknown, paths...)
	u.SetAPIVersion(c.gvk.GroupVersion().String())
	u.SetKind(c.gvk.Kind)
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			r.errs = append(r.errs, fmt.Sprintf("metadata: %v", err))
			return r
		}
	}
	structuraldefaulting.Default(u.Object, c.structural)

	rest.FillObjectMetaSystemFields(u)
	var w warnings
	ctx := genericapirequest.WithNamespace(context.Background(), ns)
	ctx = warning.WithWarningRecorder(ctx, &w)
	if err := rest.BeforeCreate(c.strategy, ctx, u); err != nil {
		r.errs = append(r.errs, statusProblems(err)...)
	}
	r.warnings = w
	sort.Strings(r.unknown)
	if len(r.unknown) == 0 && !reflect.DeepEqual(sentSpec, u.Object["spec"]) {
		r.rewritten = true
	}
	return r
}
