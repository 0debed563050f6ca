package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	yamlv3 "gopkg.in/yaml.v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// managerDoc is one RolloutManager document of a file.
type managerDoc struct {
	index int
	obj   map[string]any
	// kubectlDiffers: kubectl (YAML 1.1) would send another object.
	kubectlDiffers bool
}

func (d managerDoc) namespace(fallback string) string {
	if md, ok := d.obj["metadata"].(map[string]any); ok {
		if ns, ok := md["namespace"].(string); ok && ns != "" {
			return ns
		}
	}
	return fallback
}

// managerDocs reads the argoproj.io RolloutManager documents of a stream by
// the YAML 1.2 core schema (readYAML12); other documents are ignored.
func managerDocs(data []byte) ([]managerDoc, error) {
	docs, err := splitYAMLDocs(data)
	if err != nil {
		return nil, err
	}
	var out []managerDoc
	for i, d := range docs {
		var head struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
		}
		if yamlv3.Unmarshal(d, &head) != nil || head.Kind != "RolloutManager" || !strings.HasPrefix(head.APIVersion, "argoproj.io/") {
			continue
		}
		v, err := readYAML12(d)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d: not a mapping", i)
		}
		ours, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		kubectl, kerr := kubectlReading(d)
		out = append(out, managerDoc{index: i, obj: m, kubectlDiffers: kerr != nil || string(kubectl) != string(ours)})
	}
	return out, nil
}

// crServerFor is the API server's custom resource handling for RolloutManager
// v1alpha1 under crd.
func crServerFor(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) *crServer {
	t.Helper()
	srv, err := newCRServer(crd, "v1alpha1")
	if err != nil {
		t.Fatalf("%s: %v", crd.Name, err)
	}
	return srv
}

// TestCRDAcceptsOperatorExamples: the operator's example RolloutManagers
// are created, unchanged, under our CRD (and, as a control of the harness,
// under the operator's own).
func TestCRDAcceptsOperatorExamples(t *testing.T) {
	ours := crServerFor(t, ourCRD(t))
	upCRD, _ := operatorCRD(t)
	theirs := crServerFor(t, upCRD)
	dir := operatorModuleDir(t)
	var files []string
	for _, g := range operatorExampleGlobs {
		m, _ := filepath.Glob(filepath.Join(dir, g))
		files = append(files, m...)
	}
	sort.Strings(files)
	holding := map[string]bool{}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := managerDocs(data)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if len(docs) > 0 {
			holding[rel] = true
		}
		for _, d := range docs {
			t.Run(fmt.Sprintf("%s#%d", rel, d.index), func(t *testing.T) {
				if d.kubectlDiffers {
					t.Errorf("kubectl (YAML 1.1) reads this example otherwise than YAML 1.2")
				}
				ns := d.namespace(defaultNamespace)
				if r := ours.create(d.obj, ns); !r.ok() {
					t.Errorf("our CRD: %s", r)
				}
				if r := theirs.create(d.obj, ns); !r.ok() {
					t.Errorf("control, the operator's CRD: %s", r)
				}
			})
		}
	}
	// Every example file is pinned (so checked byte for byte), and every
	// pinned example holds a RolloutManager.
	for f := range holding {
		if _, ok := operatorFiles[f]; !ok {
			t.Errorf("%s holds a RolloutManager but is not in operatorFiles", f)
		}
	}
	for f := range operatorFiles {
		if f != operatorCRDFile && !holding[f] {
			t.Errorf("%s: no RolloutManager found", f)
		}
	}
}

// TestCRDAcceptsTestdata: every RolloutManager of testdata/*.yaml, which the
// renderer accepts, is created under our CRD with nothing pruned or changed.
func TestCRDAcceptsTestdata(t *testing.T) {
	srv := crServerFor(t, ourCRD(t))
	var files []string
	for _, ext := range []string{"*.yaml", "*.yml", "*.json"} {
		m, _ := filepath.Glob(filepath.Join(testdataDir(), ext))
		files = append(files, m...)
	}
	sort.Strings(files)
	total := 0
	for _, f := range files {
		base := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := managerDocs(data)
		if err != nil {
			t.Errorf("%s: %v", base, err)
			continue
		}
		fallbackNS := parseArgs(caseArgs(data)).namespace
		if fallbackNS == "" {
			fallbackNS = defaultNamespace
		}
		for _, d := range docs {
			total++
			t.Run(fmt.Sprintf("%s#%d", base, d.index), func(t *testing.T) {
				if d.kubectlDiffers {
					t.Logf("kubectl (YAML 1.1) would send another object; checked as YAML 1.2 reads it, as the renderer does")
				}
				if r := srv.create(d.obj, d.namespace(fallbackNS)); !r.ok() {
					t.Error(r)
				}
			})
		}
	}
	if total == 0 {
		t.Fatalf("no RolloutManager in %s", testdataDir())
	}
}

// crdInvalidCases are the testdata/invalid/ files whose rule is a schema
// matter, with the field paths our CRD must refuse. Unknown fields count as
// refused when pruned: kubectl's default field validation (Strict) turns
// each pruned field into an error.
var crdInvalidCases = map[string][]string{
	"unknown-fields.yaml":            {"spec.extraCommandArg", "spec.nodePlacement.nodeSelectors", "spec.plugins.metrics", "spec.plugins.trafficManagement[0].sha265"},
	"wrong-type.yaml":                {"spec.namespaceScoped"},
	"plugin-name-format.yaml":        {"spec.plugins.trafficManagement[0].name"},
	"sha256-is-sha1.yaml":            {"spec.plugins.metric[0].sha256"},
	"sha256-upper-case.yaml":         {"spec.plugins.trafficManagement[0].sha256"},
	"image-pull-policy.yaml":         {"spec.imagePullPolicy"},
	"ha-without-enabled.yaml":        {"spec.ha.enabled"},
	"headers-from-without-name.yaml": {"spec.plugins.metric[0].headersFrom[0].secretRef.name"},
}

// TestCRDRefusesInvalid: the schema-level invalid cases fail under our CRD,
// each at the field its rule is about.
func TestCRDRefusesInvalid(t *testing.T) {
	srv := crServerFor(t, ourCRD(t))
	for _, name := range sortedKeys(crdInvalidCases) {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(testdataDir(), "invalid", name))
			if err != nil {
				t.Fatal(err)
			}
			docs, err := managerDocs(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) == 0 {
				t.Fatal("no RolloutManager document")
			}
			var texts []string
			for _, d := range docs {
				if r := srv.create(d.obj, d.namespace(defaultNamespace)); !r.ok() {
					texts = append(texts, r.String())
				}
			}
			if len(texts) == 0 {
				t.Fatal("accepted by our CRD with nothing pruned")
			}
			all := strings.Join(texts, "\n")
			for _, want := range crdInvalidCases[name] {
				if !strings.Contains(all, want) {
					t.Errorf("no error at %s; got:\n%s", want, all)
				}
			}
			t.Log(all)
		})
	}
}
