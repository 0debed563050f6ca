package conformance

import (
	"fmt"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"sort"
	"testing"

	"github.com/argoproj/argo-rollouts/utils/config"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	"github.com/argoproj/argo-rollouts/utils/plugin/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// pluginKeys are the ConfigMap keys Argo Rollouts reads, and the type it
// gives the entries of each.
var pluginKeys = []struct {
	key string
	typ types.PluginType
}{
	{"trafficRouterPlugins", types.PluginTypeTrafficRouter},
	{"metricProviderPlugins", types.PluginTypeMetricProvider},
	{"stepPlugins", types.PluginTypeStep},
}

// sha256Hex is the only digest form the downloader can ever match (see
// TestDownloaderAgrees): for any other length it hashes differently.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// configMaps returns the argo-rollouts-config ConfigMaps of a stream.
func configMaps(data []byte) ([]*corev1.ConfigMap, []string) {
	docs, err := splitYAMLDocs(data)
	if err != nil {
		return nil, []string{fmt.Sprintf("splitting documents: %v", err)}
	}
	var out []*corev1.ConfigMap
	var problems []string
	for _, doc := range docs {
		var tm metav1.TypeMeta
		if yaml.Unmarshal(doc, &tm) != nil || tm.APIVersion != "v1" || tm.Kind != "ConfigMap" {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := yaml.Unmarshal(doc, cm); err != nil {
			problems = append(problems, fmt.Sprintf("ConfigMap: %v", err))
			continue
		}
		if cm.Name == defaults.DefaultRolloutsConfigMapName {
			out = append(out, cm)
		}
	}
	return out, problems
}

// loadWithArgoRollouts runs Argo Rollouts' own start-up loading
// (config.InitializeConfig) against a fake API server holding cm, with
// POD_NAMESPACE set to cm's namespace as the controller's pod would have it.
// It leaves the loaded config in place for plugin.DownloadPlugins; the caller
// calls config.UnInitializeConfig.
func loadWithArgoRollouts(cm *corev1.ConfigMap) ([]types.PluginItem, error) {
	restore := setEnv("POD_NAMESPACE", cm.Namespace)
	defer restore()
	config.UnInitializeConfig()
	client := fake.NewSimpleClientset(cm.DeepCopy())
	cfg, err := config.InitializeConfig(client, defaults.DefaultRolloutsConfigMapName)
	if err != nil {
		return nil, err
	}
	return cfg.GetAllPlugins(), nil
}

// setEnv sets an environment variable and returns its undo (tests in this
// package do not run in parallel).
func setEnv(k, v string) func() {
	old, had := os.LookupEnv(k)
	os.Setenv(k, v)
	return func() {
		if had {
			os.Setenv(k, old)
		} else {
			os.Unsetenv(k)
		}
	}
}

// checkPluginEntries covers what Argo Rollouts does not check (it drops
// unknown keys silently): every entry decodes strictly and case-sensitively
// into upstream's PluginItem, its location parses the way the downloader
// parses it, its sha256 has a form the downloader can match, and the keys are
// the ones the controller reads.
func checkPluginEntries(cm *corev1.ConfigMap) (problems []string) {
	bad := func(format string, a ...any) {
		problems = append(problems, fmt.Sprintf("ConfigMap %s: ", cm.Namespace)+fmt.Sprintf(format, a...))
	}
	for _, k := range pluginKeys {
		v, ok := cm.Data[k.key]
		if !ok {
			if k.typ != types.PluginTypeStep {
				bad("key %s missing", k.key)
			}
			continue
		}
		j, err := yaml.YAMLToJSONStrict([]byte(v))
		if err != nil {
			bad("%s: %v", k.key, err)
			continue
		}
		var items []types.PluginItem
		strictErrs, err := sigsjson.UnmarshalStrict(j, &items)
		if err != nil {
			bad("%s: %v", k.key, err)
			continue
		}
		for _, e := range strictErrs {
			bad("%s: %v (Argo Rollouts would ignore it silently)", k.key, e)
		}
		if k.typ == types.PluginTypeStep && len(items) == 0 {
			bad("stepPlugins present but empty")
		}
		for i, it := range items {
			where := fmt.Sprintf("%s[%d] %q", k.key, i, it.Name)
			if it.Type != "" {
				bad("%s: a `Type` key binds to PluginItem.Type", where)
			}
			u, err := url.ParseRequestURI(it.Location)
			switch {
			case err != nil:
				bad("%s: location: %v", where, err)
			case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file":
				bad("%s: location scheme %q: the downloader takes http, https, file", where, u.Scheme)
			}
			if it.Sha256 != "" && !sha256Hex.MatchString(it.Sha256) {
				bad("%s: sha256 %q is not 64 lowercase hex characters: the downloader can never match it", where, it.Sha256)
			}
			if i > 0 && items[i-1].Name >= it.Name {
				bad("%s: not sorted by name after %q", where, items[i-1].Name)
			}
		}
	}
	for key := range cm.Data {
		if key != "trafficRouterPlugins" && key != "metricProviderPlugins" && key != "stepPlugins" {
			bad("unexpected key %q (Argo Rollouts reads only the plugin keys)", key)
		}
	}
	return problems
}

// expectedPlugins is what the controller should load for a manager, in
// ConfigMap order (each kind sorted by name).
func expectedPlugins(m rolloutManager, openShift string) []types.PluginItem {
	conv := func(in []inputPlugin, typ types.PluginType) []types.PluginItem {
		out := make([]types.PluginItem, 0, len(in))
		for _, p := range in {
			out = append(out, types.PluginItem{Name: p.Name, Location: p.Location, Sha256: p.Sha256, Type: typ,
				Disabled: p.Disabled, Args: p.Args, HeadersFrom: p.HeadersFrom})
		}
		return out
	}
	traffic := conv(m.Spec.Plugins.TrafficManagement, types.PluginTypeTrafficRouter)
	if openShift != "" {
		traffic = append(traffic, types.PluginItem{Name: openShiftPluginName, Location: openShift, Type: types.PluginTypeTrafficRouter})
	}
	var all []types.PluginItem
	for _, l := range [][]types.PluginItem{traffic, conv(m.Spec.Plugins.Metric, types.PluginTypeMetricProvider), conv(m.Spec.Plugins.Step, types.PluginTypeStep)} {
		sort.SliceStable(l, func(i, j int) bool { return l[i].Name < l[j].Name })
		all = append(all, l...)
	}
	return all
}

// normalize makes nil and empty slices equal.
func normalize(items []types.PluginItem) []types.PluginItem {
	out := make([]types.PluginItem, len(items))
	for i, it := range items {
		if len(it.Args) == 0 {
			it.Args = nil
		}
		if len(it.HeadersFrom) == 0 {
			it.HeadersFrom = nil
		}
		out[i] = it
	}
	return out
}

// checkRolloutsConfig loads each argo-rollouts-config with Argo Rollouts and,
// when the input is known, compares what the controller would install with
// the RolloutManager's spec, entry by entry.
func checkRolloutsConfig(s *stream) []string {
	cms, problems := configMaps(s.yaml)
	if len(cms) == 0 {
		return append(problems, fmt.Sprintf("no %s ConfigMap", defaults.DefaultRolloutsConfigMapName))
	}
	if s.managers != nil && len(cms) != len(s.managers) {
		problems = append(problems, fmt.Sprintf("%d RolloutManagers in the input, %d ConfigMaps in the output", len(s.managers), len(cms)))
	}
	byNS := map[string]rolloutManager{}
	for _, m := range s.managers {
		byNS[m.namespace(s.defaultNS)] = m
	}
	defer config.UnInitializeConfig()
	for _, cm := range cms {
		problems = append(problems, checkPluginEntries(cm)...)
		got, err := loadWithArgoRollouts(cm)
		if err != nil {
			problems = append(problems, fmt.Sprintf("ConfigMap %s: Argo Rollouts fails at start-up: %v", cm.Namespace, err))
			continue
		}
		if s.managers == nil {
			continue
		}
		m, ok := byNS[cm.Namespace]
		if !ok {
			problems = append(problems, fmt.Sprintf("ConfigMap in namespace %q matches no RolloutManager of the input", cm.Namespace))
			continue
		}
		want := expectedPlugins(m, s.openShift)
		problems = append(problems, checkImageDelivery(s, cm.Namespace, m, want, got)...)
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			problems = append(problems, fmt.Sprintf("ConfigMap %s: Argo Rollouts loads\n%s\nthe RolloutManager %s asks for\n%s",
				cm.Namespace, describe(got), m.Metadata.Name, describe(want)))
		}
	}
	return problems
}

func describe(items []types.PluginItem) string {
	b, _ := yaml.Marshal(items)
	return string(b)
}

func TestArgoRolloutsLoadsConfig(t *testing.T) {
	forEachStream(t, func(t *testing.T, s *stream) { report(t, checkRolloutsConfig(s)) })
}

// TestConfigLoaderIsLenient pins the upstream behaviour that makes
// checkPluginEntries necessary: an unknown key loads without error.
func TestConfigLoaderIsLenient(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: defaults.DefaultRolloutsConfigMapName, Namespace: "ns"},
		Data: map[string]string{
			"trafficRouterPlugins":  "- name: a/b\n  location: https://example.com/p\n  sha256: \"\"\n  rules: []\n",
			"metricProviderPlugins": "[]\n",
		},
	}
	defer config.UnInitializeConfig()
	got, err := loadWithArgoRollouts(cm)
	if err != nil || len(got) != 1 {
		t.Fatalf("upstream loader changed: %v %v", got, err)
	}
	if p := checkPluginEntries(cm); len(p) != 1 {
		t.Errorf("want exactly the unknown key reported, got %q", p)
	}
}
