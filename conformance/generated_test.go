package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

// The promise "refused here, or accepted by the API server", tested over a
// generated corpus: RolloutManagers mutated field by field (resources, env,
// labels, annotations, tolerations, node selectors, images) are rendered by
// the release binary. Every one the renderer accepts must pass the API
// server's create path for every rendered object. Every one it refuses is
// compared with what the API server makes of the same values in the rendered
// Deployment: the API server must refuse them too, at the field the mutation
// is about, unless the refusal is one of the renderer's stated policies
// (policies below), which are counted and reported.

// A mutant: values for one area of the spec, and the same values placed where
// the renderer writes them in its Deployment.
type mutant struct {
	area  string
	spec  map[string]any
	place func(deployment map[string]any)
}

// Where each area's problems are named: the renderer's field path and the API
// server's (in the Deployment).
var areas = map[string]struct {
	ours   string
	theirs []string
}{
	"resources":    {"spec.controllerResources", []string{"spec.template.spec.containers[0].resources"}},
	"env":          {"spec.env", []string{"spec.template.spec.containers[0].env"}},
	"labels":       {"spec.additionalMetadata.labels", []string{"metadata.labels", "spec.template.labels"}},
	"annotations":  {"spec.additionalMetadata.annotations", []string{"metadata.annotations", "spec.template.annotations"}},
	"tolerations":  {"spec.nodePlacement.tolerations", []string{"spec.template.spec.tolerations"}},
	"nodeSelector": {"spec.nodePlacement.nodeSelector", []string{"spec.template.spec.nodeSelector"}},
	"image":        {"spec.", []string{"spec.template.spec.containers[0].image"}},
}

// Refusals the renderer makes on purpose where the API server would accept
// the value: each matches the renderer's message, and says why.
var policies = []struct {
	name, why string
	message   *regexp.Regexp
}{
	{"quantity without a number", "`m`, `+` or `e3` parse as zero: surely a typo", regexp.MustCompile("has no number in it")},
	{"quantity stored as another amount", "Go drops an exponent with no SI suffix (1000E is stored as 1)", regexp.MustCompile("would store .* as .*another amount")},
	{"whitespace in an image", "the kubelet cannot pull a reference with spaces", regexp.MustCompile("contains whitespace")},
	{"fractional bytes", "the API server only warns; a memory limit of 0.1 byte never runs", regexp.MustCompile("fractional number of bytes")},
	{"quantity with spaces", "the API server trims them in a Deployment; the RolloutManager CRD's pattern refuses them", regexp.MustCompile("has white space around it")},
	{"quantity as a fraction", "the API server takes 0.5 in a Deployment; the RolloutManager CRD only integers and strings", regexp.MustCompile("is a YAML number, and the RolloutManager CRD")},
}

func pick[T any](r *rand.Rand, items ...T) T { return items[r.Intn(len(items))] }

// gen draws the values of one mutant. A clean mutant draws only values the API
// server accepts, a hostile one also the others, so the corpus holds both
// sides of every rule in numbers.
type gen struct {
	r       *rand.Rand
	hostile bool
}

// choose draws from good, or in a hostile mutant from good and bad together.
func choose[T any](g gen, good []T, bad ...T) T {
	if g.hostile && len(bad) > 0 && g.r.Intn(2) == 0 {
		return pick(g.r, bad...)
	}
	return pick(g.r, good...)
}

// quantity is a quantity as a RolloutManager may hold it: mostly a string,
// sometimes a JSON number (an integer, or in a hostile mutant a fraction).
func quantity(g gen) any {
	if g.r.Intn(8) == 0 {
		return choose(g, []any{1, 2, 1000000000, 0, 3e9}, 0.5, 2.25, 1e300, -1)
	}
	return quantityText(g)
}

func quantityText(g gen) string {
	if g.hostile && g.r.Intn(10) == 0 {
		return pick(g.r, "m", "+", "1000E", "1e3.5", "", "0x10", "1_000", "-1", "1 ", " 2Gi")
	}
	sign := choose(g, []string{"", "", "", "", "+"}, "-")
	digits := pick(g.r, "0", "1", "2", "5", "10", "100", "250", "1000", "1024", "3")
	fraction := pick(g.r, "", "", "", ".5", ".25", ".0", ".")
	suffix := choose(g, []string{"", "", "m", "k", "M", "G", "Ki", "Mi", "Gi", "n", "u", "e3", "E-2", "e2"}, "e", "x", "mi", " ")
	return sign + digits + fraction + suffix
}

func resourcesMutant(g gen) mutant {
	names := func() string {
		return choose(g, []string{"cpu", "memory", "ephemeral-storage", "cpu", "memory", "example.com/gpu", "nvidia.com/gpu"},
			"cpus", "CPU", "hugepages-2Mi", "hugepages-1Gi", "kubernetes.io/foo", "requests.example.com/x", "a/b/c")
	}
	list := func() map[string]any {
		m := map[string]any{}
		for i := g.r.Intn(3); i >= 0; i-- {
			m[names()] = quantity(g)
		}
		return m
	}
	resources := map[string]any{}
	if g.r.Intn(4) != 0 {
		resources["limits"] = list()
	}
	if g.r.Intn(4) != 0 {
		resources["requests"] = list()
	}
	return mutant{"resources", map[string]any{"controllerResources": resources},
		func(d map[string]any) { container(d)["resources"] = resources }}
}

func envMutant(g gen) mutant {
	var env []any
	for i := g.r.Intn(3); i >= 0; i-- {
		v := map[string]any{"name": choose(g, []string{"FOO", "LOG_LEVEL", "my.var-1", "_x", "a-b"}, "1FOO", "a b", "A=B", "..", ".", "é", "~x", "")}
		sources := map[string]any{}
		switch g.r.Intn(6) {
		case 0:
			v["value"] = "x"
		case 1:
			field := map[string]any{"fieldPath": choose(g, []string{"metadata.name", "metadata.namespace", "metadata.labels['a']",
				"metadata.annotations['k']", "spec.nodeName", "spec.serviceAccountName", "status.podIP", "status.hostIP", "metadata.uid"},
				"metadata.labels['a b']", "metadata.annotations['K']", "spec.host", "spec.restartPolicy", "status.phase", "nope", "", "metadata.name['x']")}
			if av := choose(g, []string{"", "", "v1"}, "v2"); av != "" {
				field["apiVersion"] = av
			}
			sources["fieldRef"] = field
		case 2:
			ref := map[string]any{"resource": choose(g, []string{"limits.cpu", "requests.memory", "requests.ephemeral-storage", "limits.memory"},
				"limits.hugepages-2Mi", "limits.gpu", "")}
			if d := choose(g, []string{"", "", "1", "1m", "1Mi", "1k"}, "2", "1000m", "x"); d != "" {
				ref["divisor"] = d
			}
			sources["resourceFieldRef"] = ref
		default:
			kind := pick(g.r, "configMapKeyRef", "secretKeyRef")
			sources[kind] = map[string]any{
				"name": choose(g, []string{"settings", "a.b", "s-1"}, "Settings", "", "a_b"),
				"key":  choose(g, []string{"k", "a.b", "K_1", "-x"}, "a/b", "", "..", "."),
			}
			if g.hostile && g.r.Intn(4) == 0 {
				sources["fieldRef"] = map[string]any{"fieldPath": "metadata.name"}
			}
		}
		if len(sources) > 0 || (g.hostile && g.r.Intn(5) == 0) {
			v["valueFrom"] = sources
			if g.hostile && g.r.Intn(5) == 0 {
				v["value"] = "both"
			}
		}
		env = append(env, v)
	}
	return mutant{"env", map[string]any{"env": env}, func(d map[string]any) { container(d)["env"] = env }}
}

// name builds label-like text: valid characters, lengths up to the limit; a
// hostile one sometimes goes past the limit or holds another character.
func name(g gen, limit int) string {
	n := choose(g, []int{1, 3, 8, limit - 1, limit}, limit+1, 0)
	var b strings.Builder
	const alphabet, edge = "abcz09-._ABZ", "abz09AZ"
	for i := 0; i < n; i++ {
		switch {
		case g.hostile && g.r.Intn(30) == 0:
			b.WriteString(pick(g.r, " ", "/", "é", "=", "~", "!", "-", "."))
		case i == 0 || i == n-1:
			b.WriteByte(edge[g.r.Intn(len(edge))])
		default:
			b.WriteByte(alphabet[g.r.Intn(len(alphabet))])
		}
	}
	return b.String()
}

func qualifiedKey(g gen) string {
	switch g.r.Intn(3) {
	case 0:
		return name(g, 63)
	case 1:
		return strings.ToLower(name(g, 253-64)) + "/" + name(g, 63)
	default:
		return choose(g, []string{"example.com", "a.b-c", "x"}, "Example.com", "a..b", "-x", strings.Repeat("a", 254)) + "/" + name(g, 20)
	}
}

func labelsMutant(g gen) mutant {
	labels := map[string]any{}
	for i := g.r.Intn(3); i >= 0; i-- {
		labels[qualifiedKey(g)] = name(g, 63)
	}
	return mutant{"labels", map[string]any{"additionalMetadata": map[string]any{"labels": labels}},
		func(d map[string]any) {
			for _, m := range []map[string]any{metaOf(d), metaOf(d["spec"].(map[string]any)["template"].(map[string]any))} {
				merged := map[string]any{}
				for k, v := range m["labels"].(map[string]any) {
					merged[k] = v
				}
				for k, v := range labels {
					merged[k] = v
				}
				m["labels"] = merged
			}
		}}
}

// The API server's limit on all annotations of an object together.
const annotationLimit = 256 * 1024

func annotationsMutant(g gen) mutant {
	annotations := map[string]any{}
	for i := g.r.Intn(3); i >= 0; i-- {
		annotations[qualifiedKey(g)] = name(g, 40)
	}
	if g.r.Intn(6) == 0 {
		// Near the limit, where the pod template's checksum annotation tips it over.
		size := annotationLimit - pick(g.r, 0, 1, 50, 92, 93, 94, 100, 200, 5000)
		key := "example.com/big"
		annotations = map[string]any{key: strings.Repeat("x", size-len(key))}
	}
	return mutant{"annotations", map[string]any{"additionalMetadata": map[string]any{"annotations": annotations}},
		func(d map[string]any) {
			metaOf(d)["annotations"] = annotations
			template := metaOf(d["spec"].(map[string]any)["template"].(map[string]any))
			merged := map[string]any{}
			for k, v := range template["annotations"].(map[string]any) {
				merged[k] = v
			}
			for k, v := range annotations {
				merged[k] = v
			}
			template["annotations"] = merged
		}}
}

func tolerationsMutant(g gen) mutant {
	var tolerations []any
	for i := g.r.Intn(3); i >= 0; i-- {
		t := map[string]any{}
		key := choose(g, []string{"dedicated", "example.com/gpu", "node.kubernetes.io/not-ready"}, "", "Bad Key", "a/b/c")
		if key != "" {
			t["key"] = key
		}
		operator := choose(g, []string{"", "Equal", "Exists"}, "Exist", "equal")
		if operator != "" {
			t["operator"] = operator
		}
		if operator != "Exists" || g.hostile {
			if v := choose(g, []string{"", "batch", "x", "a.b-c"}, "a b", "-x"); v != "" {
				t["value"] = v
			}
		}
		effect := choose(g, []string{"", "NoSchedule", "PreferNoSchedule", "NoExecute"}, "NoSchedual")
		if effect != "" {
			t["effect"] = effect
		}
		if effect == "NoExecute" || (g.hostile && g.r.Intn(4) == 0) {
			t["tolerationSeconds"] = choose(g, []int{0, 30, 300}, -1)
		}
		tolerations = append(tolerations, t)
	}
	return mutant{"tolerations", map[string]any{"nodePlacement": map[string]any{"tolerations": tolerations}},
		func(d map[string]any) { pod(d)["tolerations"] = tolerations }}
}

func nodeSelectorMutant(g gen) mutant {
	selector := map[string]any{}
	for i := g.r.Intn(3); i >= 0; i-- {
		selector[qualifiedKey(g)] = name(g, 63)
	}
	return mutant{"nodeSelector", map[string]any{"nodePlacement": map[string]any{"nodeSelector": selector}},
		func(d map[string]any) {
			merged := map[string]any{"kubernetes.io/os": "linux"}
			for k, v := range selector {
				merged[k] = v
			}
			pod(d)["nodeSelector"] = merged
		}}
}

func imageMutant(g gen) mutant {
	image := choose(g, []string{"", "quay.io/argoproj/argo-rollouts", "registry.example.com/ar", "localhost:5000/ar"}, " x", "x ", "a b", "UPPER/case")
	version := choose(g, []string{"", "v1.9.1", "sha256:" + strings.Repeat("a", 64), "latest"}, "v1 .2")
	spec := map[string]any{}
	if image != "" {
		spec["image"] = image
	}
	if version != "" {
		spec["version"] = version
	}
	return mutant{"image", spec, func(d map[string]any) {
		i, v := image, version
		if i == "" {
			i = "quay.io/argoproj/argo-rollouts"
		}
		if v == "" {
			v = "v1.9.1"
		}
		sep := ":"
		if strings.Contains(v, ":") {
			sep = "@"
		}
		container(d)["image"] = i + sep + v
	}}
}

func metaOf(obj map[string]any) map[string]any { return obj["metadata"].(map[string]any) }
func pod(d map[string]any) map[string]any {
	return d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
}
func container(d map[string]any) map[string]any {
	return pod(d)["containers"].([]any)[0].(map[string]any)
}

func managerJSON(spec map[string]any) []byte {
	data, _ := json.Marshal(map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "RolloutManager",
		"metadata": map[string]any{"name": "argo-rollouts", "namespace": "argo-rollouts"},
		"spec":     spec,
	})
	return data
}

// apiProblem is one error of the API server: the field it names ("" when
// the whole object could not be decoded) and its message.
type apiProblem struct{ field, message string }

// deploymentErrors validates a Deployment given as data the way the API
// server would: strict decoding, then the create path.
func deploymentErrors(d map[string]any) []apiProblem {
	data, err := yaml.Marshal(d)
	if err != nil {
		return []apiProblem{{"", err.Error()}}
	}
	obj, gvk, err := strictYAML.Decode(data, nil, &appsv1.Deployment{})
	if err != nil {
		return []apiProblem{{"", "decoding: " + err.Error()}}
	}
	errs, _ := validateObject(obj, gvk, true)
	var out []apiProblem
	for _, e := range errs {
		var status apierrors.APIStatus
		if errors.As(e, &status) && status.Status().Details != nil && len(status.Status().Details.Causes) > 0 {
			for _, c := range status.Status().Details.Causes {
				out = append(out, apiProblem{c.Field, c.Message})
			}
			continue
		}
		out = append(out, apiProblem{"", e.Error()})
	}
	return out
}

func fieldsOf(problems []apiProblem) []string {
	var out []string
	for _, p := range problems {
		out = append(out, p.field)
	}
	return out
}

// short keeps a failure message readable when an input holds a value of
// hundreds of kilobytes.
func short(s string) string {
	const limit = 600
	if len(s) <= limit {
		return s
	}
	return s[:limit] + fmt.Sprintf("... (%d bytes more)", len(s)-limit)
}

func TestGeneratedManagersMeetTheAPIServer(t *testing.T) {
	seed, count := int64(1), 3000
	if s := os.Getenv("RR_API_CORPUS"); s != "" {
		fmt.Sscan(s, &count)
	}
	if s := os.Getenv("RR_API_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	r := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	base := deploymentOf(t, renderOK(t, "render", writeFile(t, dir, "base.json", managerJSON(map[string]any{}))))
	// Each accepted RolloutManager must also be one the API server stores under our CRD
	// and, where its files are available, the operator's.
	crds := []*crServer{crServerFor(t, ourCRD(t))}
	operatorOnce.Do(func() { operatorDir, operatorOrigin, operatorErr = resolveOperatorModule() })
	withOperator := operatorErr == nil
	if withOperator {
		up, _ := operatorCRD(t)
		crds = append(crds, crServerFor(t, up))
	}
	generators := []func(gen) mutant{resourcesMutant, envMutant, labelsMutant, annotationsMutant,
		tolerationsMutant, nodeSelectorMutant, imageMutant}
	accepted, refusedBoth, byPolicy := map[string]int{}, map[string]int{}, map[string]int{}
	failures := 0
	fail := func(format string, args ...any) {
		failures++
		if failures <= 30 {
			t.Errorf(format, args...)
		}
	}
	for i := 0; i < count; i++ {
		m := generators[i%len(generators)](gen{r, i/len(generators)%2 == 1})
		input := managerJSON(m.spec)
		res := runBinary(t, "render", writeFile(t, dir, fmt.Sprintf("m%d.json", i%16), input))
		switch res.code {
		case 0:
			if r := createManager(crds, input); r != "" {
				fail("accepted here, refused by the RolloutManager CRD (%s): %s\ninput: %s", m.area, short(r), short(string(input)))
				continue
			}
			problems, _ := checkKubernetes(res.stdout)
			if len(problems) > 0 {
				fail("accepted here, refused by the API server (%s): %s\ninput: %s", m.area, short(strings.Join(problems, "; ")), short(string(input)))
				continue
			}
			accepted[m.area]++
		case 1:
			d := deepCopy(base)
			m.place(d)
			errs := deploymentErrors(d)
			stderr := string(res.stderr)
			if len(errs) == 0 {
				policy := ""
				for _, p := range policies {
					if p.message.MatchString(stderr) {
						policy = p.name
					}
				}
				if policy == "" {
					fail("refused here, accepted by the API server (%s):\n%s\ninput: %s", m.area, short(stderr), short(string(input)))
					continue
				}
				byPolicy[policy]++
				continue
			}
			area := areas[m.area]
			if !strings.Contains(stderr, area.ours) {
				fail("refused here for another field than %s:\n%s\ninput: %s", area.ours, short(stderr), short(string(input)))
				continue
			}
			named := false
			for _, f := range fieldsOf(errs) {
				// A value that does not decode (a quantity, an int) is named by
				// the decoder for the object as a whole.
				for _, theirs := range area.theirs {
					named = named || f == "" || strings.HasPrefix(f, theirs)
				}
			}
			if !named {
				fail("refused by both, but the API server names other fields (%v) than %s:\n%s\ninput: %s", fieldsOf(errs), area.theirs, short(stderr), short(string(input)))
				continue
			}
			refusedBoth[m.area]++
		default:
			fail("exit status %d:\n%s\ninput: %s", res.code, short(string(res.stderr)), short(string(input)))
		}
	}
	summary := func(m map[string]int) string {
		keys := make([]string, 0, len(m))
		total := 0
		for k, v := range m {
			keys = append(keys, fmt.Sprintf("%s %d", k, v))
			total += v
		}
		sort.Strings(keys)
		return fmt.Sprintf("%d (%s)", total, strings.Join(keys, ", "))
	}
	crdNote := "our CRD"
	if withOperator {
		crdNote = "our CRD and the operator's"
	}
	line := fmt.Sprintf("API server corpus (seed %d): %d RolloutManagers; accepted by both %s (and by %s); refused by both %s; refused by policy %s; %d disagreements",
		seed, count, summary(accepted), crdNote, summary(refusedBoth), summary(byPolicy), failures)
	t.Log(line)
	runNote(line)
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func deploymentOf(t testing.TB, stream []byte) map[string]any {
	t.Helper()
	docs, err := splitYAMLDocs(stream)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		if obj["kind"] == "Deployment" {
			return obj
		}
	}
	t.Fatal("no Deployment rendered")
	return nil
}

func deepCopy(m map[string]any) map[string]any {
	data, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

// createManager creates a RolloutManager (JSON) under each CRD; "" when all
// accept it, else what the first refusal says.
func createManager(crds []*crServer, input []byte) string {
	v, err := readYAML12(input)
	if err != nil {
		return err.Error()
	}
	for _, srv := range crds {
		if r := srv.create(v.(map[string]any), "argo-rollouts"); !r.ok() {
			return fmt.Sprint(r)
		}
	}
	return ""
}
