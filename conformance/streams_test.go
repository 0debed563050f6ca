package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/argoproj/argo-rollouts/utils/plugin/types"
	yamlv3 "gopkg.in/yaml.v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// defaultNamespace is passed with -n; it only applies to managers without
// metadata.namespace.
const defaultNamespace = "rr-conformance"

// openShiftPluginName/Location: what --openshift-route-plugin adds (UPSTREAM.md).
const (
	openShiftPluginName     = "argoproj-labs/openshift"
	openShiftPluginLocation = "https://github.com/argoproj-labs/rollouts-plugin-trafficrouter-openshift/releases/download/commit-8d0b3c6c5c18341f9f019cf1015b56b0d0c6085b/rollouts-plugin-trafficrouter-openshift-linux-amd64"
)

// apiVersions is a KUBE_API_VERSIONS-like list of a cluster that has the
// Prometheus operator, so the optional ServiceMonitor is rendered too.
const apiVersions = "v1,apps/v1,rbac.authorization.k8s.io/v1,networking.k8s.io/v1,monitoring.coreos.com/v1,monitoring.coreos.com/v1/ServiceMonitor"

// renderModes: every testdata file is rendered once per mode.
var renderModes = []struct {
	name string
	args []string
}{
	{name: "as-is"},
	{name: "openshift+monitoring", args: []string{"--openshift-route-plugin", "--api-versions", apiVersions}},
}

// stream is one rendered output under test.
type stream struct {
	name string
	yaml []byte
	// json is `-o json` of the same render; nil when unknown (snapshots).
	json []byte
	// managers are the RolloutManagers of the input; nil when unknown.
	managers []rolloutManager
	// defaultNS applies to managers without metadata.namespace.
	defaultNS string
	// openShift: location of the OpenShift route plugin the renderer was
	// asked to add, "" when not asked.
	openShift string
}

// rolloutManager is the part of the input the ConfigMap must reflect.
type rolloutManager struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		Plugins struct {
			TrafficManagement []inputPlugin `yaml:"trafficManagement"`
			Metric            []inputPlugin `yaml:"metric"`
			Step              []inputPlugin `yaml:"step"`
		} `yaml:"plugins"`
	} `yaml:"spec"`
}

type inputPlugin struct {
	Name        string              `yaml:"name"`
	Location    string              `yaml:"location"`
	Sha256      string              `yaml:"sha256"`
	Args        []string            `yaml:"args"`
	Disabled    bool                `yaml:"disabled"`
	HeadersFrom []types.HeadersFrom `yaml:"headersFrom"`
	Image       *inputImage         `yaml:"image"`
}

func (m rolloutManager) namespace(defaultNS string) string {
	if m.Metadata.Namespace != "" {
		return m.Metadata.Namespace
	}
	return defaultNS
}

// caseArgs are the options of a testdata case, from a first line
// `# args: ...` (testdata/README.md).
func caseArgs(input []byte) []string {
	first, _, _ := bytes.Cut(input, []byte("\n"))
	if rest, ok := bytes.CutPrefix(first, []byte("# args:")); ok {
		return strings.Fields(string(rest))
	}
	return nil
}

// renderSettings is what a command line means for the checks.
type renderSettings struct {
	namespace   string // from -n/--namespace, "" if absent
	openShift   string // plugin location, "" if not asked
	apiVersions bool   // --api-versions given
}

func parseArgs(args []string) renderSettings {
	var r renderSettings
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-n" || a == "--namespace") && i+1 < len(args):
			r.namespace = args[i+1]
			i++
		case strings.HasPrefix(a, "--namespace="):
			r.namespace = strings.TrimPrefix(a, "--namespace=")
		case a == "--openshift-route-plugin":
			r.openShift = openShiftPluginLocation
		case strings.HasPrefix(a, "--openshift-route-plugin="):
			r.openShift = strings.TrimPrefix(a, "--openshift-route-plugin=")
		case a == "--api-versions" || strings.HasPrefix(a, "--api-versions="):
			r.apiVersions = true
		}
	}
	return r
}

// modeArgs adds a mode's options to a case's own, leaving out what the case
// already decides.
func modeArgs(caseArgs []string, mode []string) []string {
	have := parseArgs(caseArgs)
	out := append([]string{"render"}, caseArgs...)
	if have.namespace == "" {
		out = append(out, "-n", defaultNamespace)
	}
	for i := 0; i < len(mode); i++ {
		switch {
		case mode[i] == "--openshift-route-plugin" && have.openShift != "":
		case mode[i] == "--api-versions" && have.apiVersions:
			i++
		default:
			out = append(out, mode[i])
		}
	}
	return out
}

// parseManagers reads the RolloutManagers of an input file, ignoring every
// other document. The renderer reads its input as YAML 1.2 (`namespace: on`
// is the string "on"), so this uses a YAML 1.2 reader too.
func parseManagers(data []byte) ([]rolloutManager, error) {
	docs, err := splitYAMLDocs(data)
	if err != nil {
		return nil, err
	}
	var out []rolloutManager
	for _, doc := range docs {
		var m rolloutManager
		if err := yamlv3.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
		if m.Kind == "RolloutManager" && strings.HasPrefix(m.APIVersion, "argoproj.io/") {
			out = append(out, m)
		}
	}
	return out, nil
}

// splitYAMLDocs cuts a YAML stream at `---` lines with apimachinery's reader
// (the one kubectl uses), dropping empty documents.
func splitYAMLDocs(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		d, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		// The reader keeps a stream's leading `---` line in the first document.
		if first, rest, _ := bytes.Cut(d, []byte("\n")); docSeparator.Match(first) {
			d = rest
		}
		if len(bytes.TrimSpace(d)) > 0 {
			docs = append(docs, d)
		}
	}
}

var docSeparator = regexp.MustCompile(`^---\s*(#.*)?$`)

// splitJSONDocs reads a stream of JSON values.
func splitJSONDocs(data []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []json.RawMessage
	for {
		var m json.RawMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		docs = append(docs, m)
	}
}

// corpus is everything rendered once per `go test` run.
type corpus struct {
	streams []*stream
	// problems found while rendering: reported by TestRenderTestdata only,
	// so a broken binary is one clear failure instead of one per check.
	problems []string
	// rejected: testdata/invalid/ inputs, refused as the contract says.
	rejected []string
	// snapshots: render snapshots taken; otherSnapshots: the other kinds
	// in snapshots/ (invalid@, import@), which hold no manifests.
	snapshots, otherSnapshots int
	inputs                    int
}

var (
	corpusOnce sync.Once
	theCorpus  corpus
)

func testdataDir() string {
	if d := os.Getenv("RR_TESTDATA"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "testdata")
}

func snapshotsDir() string {
	if d := os.Getenv("RR_SNAPSHOTS"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "snapshots")
}

func loadCorpus(t testing.TB) *corpus {
	t.Helper()
	binaryPath(t) // fail early and clearly without a binary
	corpusOnce.Do(func() { theCorpus = buildCorpus(t) })
	return &theCorpus
}

func buildCorpus(t testing.TB) corpus {
	var c corpus
	var files []string
	for _, ext := range []string{"*.yaml", "*.yml", "*.json"} {
		m, _ := filepath.Glob(filepath.Join(testdataDir(), ext))
		files = append(files, m...)
	}
	sort.Strings(files)
	c.inputs = len(files)
	for _, f := range files {
		c.addTestdata(t, f)
	}
	invalid, _ := filepath.Glob(filepath.Join(testdataDir(), "invalid", "*.yaml"))
	sort.Strings(invalid)
	for _, f := range invalid {
		c.addInvalid(t, f)
	}
	c.addSnapshots(files)
	if dir := os.Getenv("RR_DUMP_DIR"); dir != "" {
		c.dump(dir)
	}
	return c
}

func (c *corpus) addTestdata(t testing.TB, file string) {
	base := filepath.Base(file)
	data, err := os.ReadFile(file)
	if err != nil {
		c.problems = append(c.problems, err.Error())
		return
	}
	managers, parseErr := parseManagers(data)
	own := caseArgs(data)
	for _, mode := range renderModes {
		args := modeArgs(own, mode.args)
		settings := parseArgs(args)
		res := runBinary(t, slices.Concat(args, []string{file})...)
		if res.code == 1 {
			if len(res.stdout) != 0 || len(res.stderr) == 0 {
				c.problems = append(c.problems, fmt.Sprintf("%s %q: exit 1 must come with an empty stdout and a diagnostic (stdout %d bytes, stderr %q)", base, args, len(res.stdout), res.stderr))
			}
			c.problems = append(c.problems, fmt.Sprintf("%s %q: refused (a rendering case; invalid inputs belong in testdata/invalid/):\n%s", base, args, res.stderr))
			continue
		}
		if res.code != 0 {
			c.problems = append(c.problems, fmt.Sprintf("%s %q: exit %d: %s", base, args, res.code, res.stderr))
			continue
		}
		if parseErr != nil {
			c.problems = append(c.problems, fmt.Sprintf("%s: Go cannot read the input (%v) but the renderer accepted it", base, parseErr))
		}
		s := &stream{name: base + "/" + mode.name, yaml: res.stdout, managers: managers,
			defaultNS: settings.namespace, openShift: settings.openShift}
		jres := runBinary(t, slices.Concat(args, []string{"-o", "json", file})...)
		if jres.code != 0 {
			c.problems = append(c.problems, fmt.Sprintf("%s %q -o json: exit %d: %s", base, args, jres.code, jres.stderr))
		} else {
			s.json = jres.stdout
		}
		c.streams = append(c.streams, s)
	}
}

// addInvalid: an invalid-input fixture must be refused the way the contract
// says: exit 1, diagnostics on stderr, nothing at all on stdout.
func (c *corpus) addInvalid(t testing.TB, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		c.problems = append(c.problems, err.Error())
		return
	}
	// Only the case's own options: a default -n would hide "no namespace".
	args := slices.Concat([]string{"render"}, caseArgs(data))
	res := runBinary(t, slices.Concat(args, []string{file})...)
	if res.code != 1 || len(res.stdout) != 0 || len(res.stderr) == 0 {
		c.problems = append(c.problems, fmt.Sprintf("invalid/%s %q: want exit 1, empty stdout, diagnostics; got exit %d, %d bytes of stdout, stderr %q",
			filepath.Base(file), args, res.code, len(res.stdout), res.stderr))
		return
	}
	c.rejected = append(c.rejected, filepath.Base(file))
}

var inputFileHeader = regexp.MustCompile(`(?m)^input_file:\s*(\S+)\s*$`)

// renderSnapshotPrefix names the insta snapshots of rendered output
// (tests/snapshots.rs): `render@<testdata file>.snap`. The other snapshots
// in snapshots/ are `invalid@…` (stderr of invalid cases) and `import@…`
// (output of `import`), which are not manifests and are not taken.
const renderSnapshotPrefix = "render@"

// addSnapshots takes every render snapshot, and requires one per testdata
// case: were the naming to change, the harness must not go quiet.
func (c *corpus) addSnapshots(inputs []string) {
	all, _ := filepath.Glob(filepath.Join(snapshotsDir(), "*.snap"))
	sort.Strings(all)
	have := map[string]bool{}
	for _, f := range all {
		base := filepath.Base(f)
		if !strings.HasPrefix(base, renderSnapshotPrefix) {
			c.otherSnapshots++
			continue
		}
		have[base] = true
		c.addSnapshot(f)
	}
	for _, in := range inputs {
		want := renderSnapshotPrefix + filepath.Base(in) + ".snap"
		if !have[want] {
			c.problems = append(c.problems, fmt.Sprintf("testdata/%s: no snapshot %s in %s", filepath.Base(in), want, snapshotsDir()))
		}
	}
}

// addSnapshot takes the body of a render snapshot (after the insta `---`
// header block), which must be a manifest stream.
func (c *corpus) addSnapshot(file string) {
	base := filepath.Base(file)
	data, err := os.ReadFile(file)
	if err != nil {
		c.problems = append(c.problems, err.Error())
		return
	}
	header, body, ok := splitSnapshot(data)
	if !ok {
		c.problems = append(c.problems, base+": no insta header (`---` … `---`)")
		return
	}
	if !looksLikeManifests(body) {
		c.problems = append(c.problems, base+": a render snapshot whose body is not a manifest stream")
		return
	}
	c.snapshots++
	s := &stream{name: "snapshot/" + base, yaml: body}
	// The input and its `# args:` tell what the ConfigMap must hold.
	m := inputFileHeader.FindSubmatch(header)
	if m == nil {
		c.problems = append(c.problems, base+": no input_file in the header")
		return
	}
	in, err := os.ReadFile(filepath.Join(repoRoot(), string(m[1])))
	if err != nil {
		c.problems = append(c.problems, fmt.Sprintf("%s: input: %v", base, err))
		return
	}
	settings := parseArgs(caseArgs(in))
	s.defaultNS, s.openShift = settings.namespace, settings.openShift
	s.managers, _ = parseManagers(in)
	c.streams = append(c.streams, s)
}

func splitSnapshot(data []byte) (header, body []byte, ok bool) {
	if !bytes.HasPrefix(data, []byte("---\n")) {
		return nil, nil, false
	}
	rest := data[4:]
	i := bytes.Index(rest, []byte("\n---\n"))
	if i < 0 {
		return nil, nil, false
	}
	return rest[:i+1], rest[i+5:], true
}

// looksLikeManifests: the first document is a mapping with apiVersion and kind.
func looksLikeManifests(body []byte) bool {
	docs, _ := splitYAMLDocs(body)
	if len(docs) == 0 {
		return false
	}
	var head map[string]any
	if yaml.Unmarshal(docs[0], &head) != nil {
		return false
	}
	_, a := head["apiVersion"]
	_, k := head["kind"]
	return a && k
}

// dump writes every YAML stream for the Python check (validate.py).
func (c *corpus) dump(dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.problems = append(c.problems, err.Error())
		return
	}
	clean := regexp.MustCompile(`[^A-Za-z0-9_.+-]+`)
	for i, s := range c.streams {
		name := fmt.Sprintf("%03d-%s.yaml", i, clean.ReplaceAllString(s.name, "_"))
		if err := os.WriteFile(filepath.Join(dir, name), s.yaml, 0o644); err != nil {
			c.problems = append(c.problems, err.Error())
		}
	}
}

// TestRenderTestdata: every testdata input renders (exit 0) or is refused the
// way the contract says (exit 1, empty stdout); the other tests check what
// was rendered.
func TestRenderTestdata(t *testing.T) {
	c := loadCorpus(t)
	if c.inputs == 0 {
		t.Fatalf("no inputs in %s", testdataDir())
	}
	for _, p := range c.problems {
		t.Error(p)
	}
	rendered := 0
	for _, s := range c.streams {
		if !strings.HasPrefix(s.name, "snapshot/") {
			rendered++
		}
	}
	if rendered == 0 {
		t.Errorf("none of the %d inputs rendered", c.inputs)
	}
	t.Logf("%d inputs, %d streams checked (%d from render snapshots; %d other snapshots not taken), rejected fixtures: %v",
		c.inputs, len(c.streams), c.snapshots, c.otherSnapshots, c.rejected)
}

// forEachStream runs check on every stream as a subtest.
func forEachStream(t *testing.T, check func(t *testing.T, s *stream)) {
	for _, s := range loadCorpus(t).streams {
		t.Run(s.name, func(t *testing.T) { check(t, s) })
	}
}

// report fails t once per problem.
func report(t *testing.T, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}
