package conformance

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	yamlv2 "gopkg.in/yaml.v2"
)

// operatorPlugin is the struct the argo-rollouts-manager operator marshals
// with gopkg.in/yaml.v2 into the ConfigMap (no omitempty: `sha256: ""`).
type operatorPlugin struct {
	Name     string `yaml:"name"`
	Location string `yaml:"location"`
	Sha256   string `yaml:"sha256"`
}

// pluginNameRE is the name rule shared by Argo Rollouts and the renderer.
var pluginNameRE = regexp.MustCompile(`^[A-Za-z0-9-]+/[A-Za-z0-9_.-]+$`)

// trickyNames look like numbers, booleans, nulls or document markers to some
// YAML reader once a part is read alone, or start with `-`.
var trickyNames = []string{
	"-a/b", "a/1e5", "---/x", "a/-", "0/0", "1/2", "y/n", "yes/no", "a/true", "a/null",
	"a/1_000", "a/0x1f", "a/0o7", "a/.5", "a/..a", "a/b.", "A-Z/_", "a/...", "on/off", "a/1.0",
}

// trickyDigests are sha256 values yaml.v2 may or may not quote: all digits
// (an int or float to YAML), digits around one `e` (a float unless it
// overflows), and the like.
var trickyDigests = []string{
	strings.Repeat("0123456789", 6) + "0123",
	"1e" + strings.Repeat("3", 62),
	strings.Repeat("0", 40) + "e" + strings.Repeat("0", 23),
	strings.Repeat("0", 31) + "1e" + strings.Repeat("0", 30) + "5",
	"e" + strings.Repeat("1", 63),
	strings.Repeat("1", 63) + "e",
	strings.Repeat("9", 64),
	strings.Repeat("0", 64),
	"",
}

var trickyLocations = []string{
	"https://example.com/plugin",
	"https://example.com:8443/a/b?x=1&y=2#frag",
	"https://example.com/1e5",
	"https://example.com/~user/yes",
	"https://example.com/a:b/c",
	"https://example.com/%20x",
	"https://example.com/#",
	"https://user@example.com/p?q=a@b",
	"https://example.com/" + strings.Repeat("long-path-segment/", 8) + "plugin-linux-amd64",
}

const (
	nameHead = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-"
	nameTail = nameHead + "_."
	urlChars = "abcdefghijklmnopqrstuvwxyz0123456789-._~/?=&+:@"
)

func randString(r *rand.Rand, alphabet string, min, max int) string {
	n := min + r.IntN(max-min+1)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func randName(r *rand.Rand) string {
	if r.IntN(4) == 0 {
		return trickyNames[r.IntN(len(trickyNames))]
	}
	for {
		n := randString(r, nameHead, 1, 12) + "/" + randString(r, nameTail, 1, 16)
		if tail := n[strings.IndexByte(n, '/')+1:]; tail != "." && tail != ".." {
			return n
		}
	}
}

func randDigest(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return trickyDigests[r.IntN(len(trickyDigests))]
	case 1:
		return ""
	}
	return randString(r, "0123456789abcdef", 64, 64)
}

func randLocation(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return trickyLocations[r.IntN(len(trickyLocations))]
	}
	path := strings.TrimLeft(randString(r, urlChars, 0, 60), "/")
	if r.IntN(4) == 0 {
		path += "%20" + randString(r, urlChars, 0, 8) // valid escapes only: the URL must parse
	}
	return "https://" + randString(r, "abcdefghijklmnopqrstuvwxyz0123456789", 1, 10) + ".example/" + path
}

// randPlugins draws up to max entries with names unused so far (the renderer
// rejects a name used twice, in any list).
func randPlugins(r *rand.Rand, used map[string]bool, max int, traffic bool) []inputPlugin {
	var out []inputPlugin
	for n := r.IntN(max + 1); len(out) < n; {
		name := randName(r)
		if used[name] || (traffic && name == openShiftPluginName) {
			if len(used) > 30 {
				break
			}
			continue
		}
		used[name] = true
		out = append(out, inputPlugin{Name: name, Location: randLocation(r), Sha256: randDigest(r)})
	}
	return out
}

// operatorBytes is the ConfigMap value the operator would write for a list.
func operatorBytes(t *testing.T, list []inputPlugin) string {
	t.Helper()
	ops := make([]operatorPlugin, 0, len(list))
	for _, p := range list {
		ops = append(ops, operatorPlugin{p.Name, p.Location, p.Sha256})
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Name < ops[j].Name })
	b, err := yamlv2.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPluginListBytesMatchOperator: for plugin lists the operator accepts,
// the ConfigMap values are byte for byte what gopkg.in/yaml.v2 writes, so a
// cluster moving between the operator and the renderer sees no diff.
func TestPluginListBytesMatchOperator(t *testing.T) {
	for _, n := range trickyNames {
		if !pluginNameRE.MatchString(n) {
			t.Fatalf("tricky name %q breaks the name rule", n)
		}
	}
	seed := uint64(20261129)
	if s := os.Getenv("RR_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	runs := 150
	if testing.Short() {
		runs = 20
	}
	r := rand.New(rand.NewPCG(seed, 1))
	// The first runs cover every tricky value at least once.
	var fixed [][3][]inputPlugin
	for i, n := range trickyNames {
		fixed = append(fixed, [3][]inputPlugin{{{Name: n, Location: trickyLocations[i%len(trickyLocations)], Sha256: trickyDigests[i%len(trickyDigests)]}}, nil, nil})
	}
	for i, d := range trickyDigests {
		fixed = append(fixed, [3][]inputPlugin{nil, {{Name: fmt.Sprintf("digest/d%d", i), Location: trickyLocations[i%len(trickyLocations)], Sha256: d}}, nil})
	}
	failures := 0
	for i := 0; i < len(fixed)+runs && failures < 5; i++ {
		var lists [3][]inputPlugin
		if i < len(fixed) {
			lists = fixed[i]
		} else {
			used := map[string]bool{}
			lists = [3][]inputPlugin{randPlugins(r, used, 4, true), randPlugins(r, used, 4, false), randPlugins(r, used, 3, false)}
		}
		input := managerYAML("rr-bytes", lists[0], lists[1], lists[2])
		res := runBinary(t, "render", writeTemp(t, input))
		if res.code != 0 {
			failures++
			t.Errorf("case %d (seed %d): exit %d for an operator-valid list:\n%s\nstderr:\n%s", i, seed, res.code, input, res.stderr)
			continue
		}
		cms, problems := configMaps(res.stdout)
		report(t, problems)
		if len(cms) != 1 {
			t.Fatalf("case %d: %d ConfigMaps", i, len(cms))
		}
		data := cms[0].Data
		for k, key := range []string{"trafficRouterPlugins", "metricProviderPlugins", "stepPlugins"} {
			got, present := data[key]
			if key == "stepPlugins" && len(lists[k]) == 0 {
				if present {
					failures++
					t.Errorf("case %d: stepPlugins present with no step plugin: %q", i, got)
				}
				continue
			}
			if want := operatorBytes(t, lists[k]); got != want {
				failures++
				t.Errorf("case %d (seed %d) %s differs from yaml.v2:\n--- yaml.v2\n%s--- rollouts-render\n%s", i, seed, key, want, got)
			}
		}
	}
}
