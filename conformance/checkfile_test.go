package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// allChecks runs every stream check and returns the problems by check name.
func allChecks(s *stream) map[string][]string {
	out := map[string][]string{}
	add := func(name string, problems []string) {
		if len(problems) > 0 {
			out[name] = append(out[name], problems...)
		}
	}
	add("argocd", checkArgoCDYAML(s.yaml))
	k, _ := checkKubernetes(s.yaml)
	add("kubernetes", k)
	add("argo-rollouts", checkRolloutsConfig(s))
	add("yaml-1.1-vs-1.2", checkYAML12(s.yaml))
	if s.json != nil {
		add("yaml-vs-json", checkYAMLMatchesJSON(s.yaml, s.json))
	}
	return out
}

func names(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestCheckFile checks a stream from a file, for planted defects and for
// output produced elsewhere (run.sh --check FILE). Env: RR_CHECK_FILE (YAML
// stream), optional RR_CHECK_INPUT (its RolloutManager input, to compare the
// plugins), RR_CHECK_JSON (the -o json rendering of the same input),
// RR_CHECK_OPENSHIFT (1, or the location given to --openshift-route-plugin=,
// when rendered with it), RR_CHECK_NAMESPACE (the -n it was rendered with).
func TestCheckFile(t *testing.T) {
	file := os.Getenv("RR_CHECK_FILE")
	if file == "" {
		t.Skip("RR_CHECK_FILE not set")
	}
	s := &stream{name: file, openShift: os.Getenv("RR_CHECK_OPENSHIFT"), defaultNS: os.Getenv("RR_CHECK_NAMESPACE")}
	if s.openShift == "1" {
		s.openShift = openShiftPluginLocation
	}
	var err error
	if s.yaml, err = os.ReadFile(file); err != nil {
		t.Fatal(err)
	}
	if in := os.Getenv("RR_CHECK_INPUT"); in != "" {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if s.managers, err = parseManagers(data); err != nil {
			t.Fatal(err)
		}
	}
	if j := os.Getenv("RR_CHECK_JSON"); j != "" {
		if s.json, err = os.ReadFile(j); err != nil {
			t.Fatal(err)
		}
	}
	found := allChecks(s)
	for _, name := range names(found) {
		for _, p := range found[name] {
			t.Errorf("[%s] %s", name, p)
		}
	}
}

// plantedDefect edits a good rendering; catchers are the checks that must
// report it.
type plantedDefect struct {
	name    string
	plant   func(t *testing.T, docs [][]byte) []byte
	catches []string
}

var plantedDefects = []plantedDefect{
	{
		name: "unquoted-yes-label",
		plant: func(t *testing.T, docs [][]byte) []byte {
			i := docIndex(t, docs, "ConfigMap")
			docs[i] = replaceOnce(t, docs[i], "\n  labels:\n", "\n  labels:\n    planted: yes\n")
			return joinDocs(docs)
		},
		catches: []string{"kubernetes", "yaml-vs-json"},
	},
	{
		name: "misspelled-deployment-field",
		plant: func(t *testing.T, docs [][]byte) []byte {
			i := docIndex(t, docs, "Deployment")
			docs[i] = replaceOnce(t, docs[i], "\n  replicas: ", "\n  replica: ")
			return joinDocs(docs)
		},
		catches: []string{"kubernetes", "yaml-vs-json"},
	},
	{
		// Well-formed YAML and schema-valid: only the API server's own
		// validation (label keys are qualified names) refuses it.
		name: "invalid-label-key",
		plant: func(t *testing.T, docs [][]byte) []byte {
			i := docIndex(t, docs, "Deployment")
			docs[i] = replaceOnce(t, docs[i], "\n  labels:\n", "\n  labels:\n    bad key!: x\n")
			return joinDocs(docs)
		},
		catches: []string{"kubernetes"},
	},
	{
		name: "plugin-entry-unknown-key",
		plant: func(t *testing.T, docs [][]byte) []byte {
			return editPluginList(t, docs, func(v string) string { return v + "  rules: []\n" })
		},
		catches: []string{"argo-rollouts"},
	},
	{
		name: "sha256-of-40-characters",
		plant: func(t *testing.T, docs [][]byte) []byte {
			return editPluginList(t, docs, func(v string) string {
				i := strings.Index(v, "sha256: ") + len("sha256: ")
				return v[:i] + strings.Repeat("ab12", 10) + v[i+64:]
			})
		},
		catches: []string{"argo-rollouts"},
	},
	{
		name: "missing-document-separator",
		plant: func(t *testing.T, docs [][]byte) []byte {
			glued := append(append([]byte{}, docs[0]...), docs[1]...)
			return joinDocs(append([][]byte{glued}, docs[2:]...))
		},
		// Argo CD itself takes the glued document (sigs.k8s.io/yaml keeps the
		// last of duplicate keys): only strict decoding and the JSON twin see it.
		catches: []string{"kubernetes", "yaml-vs-json"},
	},
}

func docIndex(t *testing.T, docs [][]byte, kind string) int {
	t.Helper()
	for i, d := range docs {
		if bytes.Contains(d, []byte("\nkind: "+kind+"\n")) {
			return i
		}
	}
	t.Fatalf("no %s document", kind)
	return -1
}

func replaceOnce(t *testing.T, doc []byte, old, new string) []byte {
	t.Helper()
	if !bytes.Contains(doc, []byte(old)) {
		t.Fatalf("%q not found in\n%s", old, doc)
	}
	return bytes.Replace(doc, []byte(old), []byte(new), 1)
}

func joinDocs(docs [][]byte) []byte {
	var b bytes.Buffer
	for _, d := range docs {
		b.WriteString("---\n")
		b.Write(d)
	}
	return b.Bytes()
}

// editPluginList edits the metricProviderPlugins value of the ConfigMap and
// writes the document back with sigs.k8s.io/yaml (the value is data, so
// re-encoding it changes nothing else).
func editPluginList(t *testing.T, docs [][]byte, edit func(string) string) []byte {
	t.Helper()
	i := docIndex(t, docs, "ConfigMap")
	var cm map[string]any
	if err := yaml.Unmarshal(docs[i], &cm); err != nil {
		t.Fatal(err)
	}
	data := cm["data"].(map[string]any)
	data["metricProviderPlugins"] = edit(data["metricProviderPlugins"].(string))
	b, err := yaml.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	docs[i] = b
	return joinDocs(docs)
}

// TestPlantedDefects shows the harness failing: each defect planted into a
// good rendering is reported by the checks expected to see it, and the
// unedited rendering passes them all. With RR_PLANTED_DIR set, the planted
// files are kept there (for run.sh --check, which adds the Python check).
func TestPlantedDefects(t *testing.T) {
	sha := strings.Repeat("0123456789abcdef", 4)
	input := managerYAML("rr-planted",
		[]inputPlugin{{Name: "argoproj-labs/gatewayAPI", Location: "https://example.com/gatewayapi", Sha256: sha}},
		[]inputPlugin{{Name: "argoproj-labs/sample-prometheus", Location: "https://example.com/prometheus", Sha256: sha}},
		[]inputPlugin{{Name: "argoproj-labs/sample-step", Location: "https://example.com/step", Sha256: sha}})
	inFile := writeTemp(t, input)
	good := &stream{name: "good", yaml: renderOK(t, "render", inFile), json: renderOK(t, "render", "-o", "json", inFile)}
	good.managers, _ = parseManagers(input)
	if got := allChecks(good); len(got) != 0 {
		t.Fatalf("the unedited rendering fails: %v", got)
	}
	keep := os.Getenv("RR_PLANTED_DIR")
	if keep != "" {
		_ = os.MkdirAll(keep, 0o755)
		_ = os.WriteFile(filepath.Join(keep, "input.yaml"), input, 0o644)
		_ = os.WriteFile(filepath.Join(keep, "good.yaml"), good.yaml, 0o644)
		_ = os.WriteFile(filepath.Join(keep, "good.json"), good.json, 0o644)
	}
	for _, d := range plantedDefects {
		t.Run(d.name, func(t *testing.T) {
			docs, err := splitYAMLDocs(good.yaml)
			if err != nil {
				t.Fatal(err)
			}
			bad := &stream{name: d.name, yaml: d.plant(t, docs), json: good.json, managers: good.managers}
			caught := allChecks(bad)
			if keep != "" {
				_ = os.WriteFile(filepath.Join(keep, d.name+".yaml"), bad.yaml, 0o644)
			}
			for _, want := range d.catches {
				if len(caught[want]) == 0 {
					t.Errorf("check %s did not report it", want)
				}
			}
			summary := ""
			for _, n := range names(caught) {
				summary += fmt.Sprintf("\n  [%s] %s", n, firstLine(caught[n][0]))
			}
			t.Logf("caught by %v:%s", names(caught), summary)
		})
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
