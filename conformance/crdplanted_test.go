package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// mutateSchema applies f to the schema node at path (property names; "[]"
// for the item schema) of a copy-on-write tree: map values are copied back.
func mutateSchema(s *apiextensionsv1.JSONSchemaProps, path []string, f func(*apiextensionsv1.JSONSchemaProps)) {
	if len(path) == 0 {
		f(s)
		return
	}
	if path[0] == "[]" {
		mutateSchema(s.Items.Schema, path[1:], f)
		return
	}
	child, ok := s.Properties[path[0]]
	if !ok {
		panic("no property " + path[0])
	}
	mutateSchema(&child, path[1:], f)
	s.Properties[path[0]] = child
}

// TestCRDPlantedDefects: the CRD checks fail on defects planted into a copy
// of our CRD, each in the check meant to catch it.
func TestCRDPlantedDefects(t *testing.T) {
	up, _ := operatorCRD(t)
	planted := func(path []string, f func(*apiextensionsv1.JSONSchemaProps)) *apiextensionsv1.CustomResourceDefinition {
		crd := ourCRD(t)
		mutateSchema(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, path, f)
		return crd
	}
	wantIn := func(t *testing.T, what string, problems []string, want string) {
		t.Helper()
		if !strings.Contains(strings.Join(problems, "\n"), want) {
			t.Errorf("%s: no problem mentioning %q; got %q", what, want, problems)
		}
	}
	compare := func(crd *apiextensionsv1.CustomResourceDefinition) []string {
		var c schemaComparison
		c.compare("", up.Spec.Versions[0].Schema.OpenAPIV3Schema, crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
		return c.problems
	}
	createDocs := func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, file string) []string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(testdataDir(), file))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := managerDocs(data)
		if err != nil || len(docs) == 0 {
			t.Fatalf("%s: %v, %d documents", file, err, len(docs))
		}
		srv := crServerFor(t, crd)
		var out []string
		for _, d := range docs {
			if r := srv.create(d.obj, d.namespace(defaultNamespace)); !r.ok() {
				out = append(out, r.String())
			}
		}
		return out
	}

	t.Run("untyped field is not structural", func(t *testing.T) {
		crd := planted([]string{"spec", "plugins"}, func(s *apiextensionsv1.JSONSchemaProps) {
			s.Properties["extra"] = apiextensionsv1.JSONSchemaProps{Description: "no type"}
		})
		wantIn(t, "create", createCRD(crd), "properties[plugins].properties[extra].type: Required value")
		wantIn(t, "structural", structuralProblems(crd), "properties[plugins].properties[extra].type: Required value")
	})
	t.Run("operator field missing", func(t *testing.T) {
		crd := planted([]string{"spec"}, func(s *apiextensionsv1.JSONSchemaProps) { delete(s.Properties, "nodePlacement") })
		wantIn(t, "operator fields", compare(crd), "spec.nodePlacement: no such field")
		wantIn(t, "testdata", createDocs(t, crd, "node-placement.yaml"), `unknown field "spec.nodePlacement" (pruned)`)
	})
	t.Run("operator field retyped", func(t *testing.T) {
		crd := planted([]string{"spec", "ha", "enabled"}, func(s *apiextensionsv1.JSONSchemaProps) { s.Type = "string" })
		wantIn(t, "operator fields", compare(crd), "spec.ha.enabled: ours is string, the operator's boolean")
		wantIn(t, "testdata", createDocs(t, crd, "ha.yaml"), "spec.ha.enabled")
	})
	t.Run("sha256 pattern dropped", func(t *testing.T) {
		crd := planted([]string{"spec", "plugins", "metric", "[]", "sha256"}, func(s *apiextensionsv1.JSONSchemaProps) { s.Pattern = "" })
		if got := createDocs(t, crd, filepath.Join("invalid", "sha256-is-sha1.yaml")); len(got) != 0 {
			t.Errorf("without the pattern, sha256-is-sha1.yaml should pass the schema; got %q", got)
		}
	})
}
