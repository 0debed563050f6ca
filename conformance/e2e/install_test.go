package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ns is where every installation of these tests lives: upstream's
// install.yaml binds its ClusterRole to the ServiceAccount there, and the
// RolloutManagers of testdata/e2e/ name it.
const ns = "argo-rollouts"

// expectedWarnings: the only testdata/e2e files rollouts-render may warn
// about, each with a piece of the warning it must print. Every other file
// must render without a word on stderr.
var expectedWarnings = map[string]string{
	"traffic-without-rules.yaml": "`argoproj-labs/gatewayAPI` needs permissions the controller's role does not have",
}

// source makes an installation of a release's controller from a
// RolloutManager file of testdata/e2e/.
type source struct {
	name    string
	install func(t *testing.T, rel Release, file string) []*unstructured.Unstructured
}

// sources: every scenario runs against rollouts-render's output and, as the
// oracle, against upstream's own install.yaml with a hand-made plugin
// ConfigMap. A scenario that fails only for "rendered" is a product bug; one
// that fails for both is a harness (or scenario) bug.
var sources = []source{
	{"rendered", renderedInstall},
	{"upstream", upstreamInstall},
}

// forEachSource runs scenario once per release and source for the
// RolloutManager file (subtests <version>/<source>), each in a fresh cluster
// with that release's CRDs and its controller started.
func forEachSource(t *testing.T, file string, scenario func(t *testing.T, c *Cluster, ctl *Controller)) {
	forEachRelease(t, func(t *testing.T, rel Release) {
		for _, src := range sources {
			t.Run(src.name, func(t *testing.T) {
				c, objs := installSource(t, src, rel, file)
				ctl := startController(t, c, objs)
				scenario(t, c, ctl)
			})
		}
	})
}

// forEachRelease runs f in a subtest per built Argo Rollouts release.
func forEachRelease(t *testing.T, f func(t *testing.T, rel Release)) {
	for _, rel := range releases(t) {
		t.Run(rel.Version, func(t *testing.T) { f(t, rel) })
	}
}

// installSource starts a fresh cluster with rel's CRDs and applies src's
// installation of rel for file.
func installSource(t *testing.T, src source, rel Release, file string) (*Cluster, []*unstructured.Unstructured) {
	t.Helper()
	c := newCluster(t, rel)
	objs := src.install(t, rel, file)
	if err := c.EnsureNamespace(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, objs, ns)
	return c, objs
}

// renderedInstall is `rollouts-render render testdata/e2e/FILE` by the
// product binary (ROLLOUTS_RENDER); without one the test skips. stderr must
// be empty, or hold the warning expectedWarnings names for the file. The
// files set no version: the default renders v1.9.1, and another release is
// chosen with --rollouts-image, the option for the operator's
// ARGO_ROLLOUTS_IMAGE.
func renderedInstall(t *testing.T, rel Release, file string) []*unstructured.Unstructured {
	t.Helper()
	var args []string
	if rel.Version != DefaultVersion {
		args = append(args, "--rollouts-image", rel.Image())
	}
	out, _ := renderFile(t, file, args...)
	objs, err := DecodeStream(out)
	if err != nil {
		t.Fatalf("rendered output of %s: %v", file, err)
	}
	return objs
}

// renderFile renders testdata/e2e/FILE (after args) and checks its
// warnings; it returns stdout and stderr.
func renderFile(t *testing.T, file string, args ...string) ([]byte, string) {
	t.Helper()
	bin, err := RenderBinary()
	if err != nil {
		t.Fatal(err)
	}
	if bin == "" {
		t.Skip("ROLLOUTS_RENDER not set: no rollouts-render binary to test")
	}
	path := file
	if !filepath.IsAbs(file) {
		path = TestdataPath(file)
	}
	out, stderr, err := Render(bin, append(args, path)...)
	if err != nil {
		t.Fatal(err)
	}
	want, warns := expectedWarnings[file]
	switch {
	case !warns && len(stderr) > 0:
		t.Fatalf("rollouts-render warned about %s:\n%s", file, stderr)
	case warns && !bytes.Contains(stderr, []byte(want)):
		t.Fatalf("rollouts-render did not warn %q about %s; stderr:\n%s", want, file, stderr)
	}
	return out, string(stderr)
}

// upstreamInstall is the release's manifests/install.yaml without its CRDs
// (envtest installed them), with the plugins of testdata/e2e/FILE written
// into its argo-rollouts-config by this harness (sigs.k8s.io/yaml, the way
// the controller reads them; not by rollouts-render) and their rules
// appended to its ClusterRole.
func upstreamInstall(t *testing.T, rel Release, file string) []*unstructured.Unstructured {
	t.Helper()
	return upstreamManifest(t, rel, "install.yaml", "ClusterRole", file)
}

// upstreamManifest is upstreamInstall for any manifest of the release
// (namespace-install.yaml: the plugin rules go to its Role).
func upstreamManifest(t *testing.T, rel Release, manifest, roleKind, file string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(rel.Manifest(manifest))
	if err != nil {
		t.Fatal(err)
	}
	all, err := DecodeStream(data)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, o := range all {
		if o.GetKind() != "CustomResourceDefinition" {
			objs = append(objs, o)
		}
	}
	// The tree at the tag names the image :latest; the release's published
	// manifests name the tag, which also picks the release's controller here.
	if dep := Find(objs, "Deployment", "argo-rollouts"); dep != nil {
		ctrs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		for _, c := range ctrs {
			c.(map[string]any)["image"] = rel.Image()
		}
		if err := unstructured.SetNestedSlice(dep.Object, ctrs, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
	}
	cm := Find(objs, "ConfigMap", "argo-rollouts-config")
	role := Find(objs, roleKind, "argo-rollouts")
	if cm == nil || role == nil {
		t.Fatalf("upstream %s lacks ConfigMap argo-rollouts-config or %s argo-rollouts", manifest, roleKind)
	}
	cmData, pluginRules := pluginConfig(t, file)
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	if err := unstructured.SetNestedStringMap(cm.Object, cmData, "data"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(role.Object, append(rules, pluginRules...), "rules"); err != nil {
		t.Fatal(err)
	}
	return objs
}

// configMapKeys maps RolloutManager spec.plugins lists to the
// argo-rollouts-config keys the controller reads.
var configMapKeys = map[string]string{
	"trafficManagement": "trafficRouterPlugins",
	"metric":            "metricProviderPlugins",
	"step":              "stepPlugins",
}

// pluginConfig reads the one RolloutManager of testdata/e2e/FILE and returns
// the argo-rollouts-config data its plugins make (every field of an entry
// except rules, which the controller does not read) and the rules of all
// entries. A spec field other than plugins fails the test: the oracle only
// knows how to write plugins into upstream's installation.
func pluginConfig(t *testing.T, file string) (map[string]string, []any) {
	t.Helper()
	data, err := os.ReadFile(TestdataPath(file))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := DecodeStream(data)
	if err != nil || len(docs) != 1 || docs[0].GetKind() != "RolloutManager" {
		t.Fatalf("%s: want exactly one RolloutManager (err %v, %d documents)", file, err, len(docs))
	}
	spec, _, _ := unstructured.NestedMap(docs[0].Object, "spec")
	for k := range spec {
		// namespaceScoped: the caller took namespace-install.yaml.
		if k != "plugins" && k != "namespaceScoped" {
			t.Fatalf("%s: spec.%s has no upstream-install equivalent in this harness", file, k)
		}
	}
	lists, _, _ := unstructured.NestedMap(spec, "plugins")
	cmData := map[string]string{}
	var rules []any
	for list, items := range lists {
		key, ok := configMapKeys[list]
		if !ok {
			t.Fatalf("%s: unknown plugin list spec.plugins.%s", file, list)
		}
		var entries []map[string]any
		for _, item := range items.([]any) {
			entry := map[string]any{}
			for k, v := range item.(map[string]any) {
				if k == "rules" {
					rules = append(rules, v.([]any)...)
				} else {
					entry[k] = v
				}
			}
			entries = append(entries, entry)
		}
		b, err := yaml.Marshal(entries)
		if err != nil {
			t.Fatal(err)
		}
		cmData[key] = string(b)
	}
	return cmData, rules
}

// hasLine reports whether some line of log contains every one of parts.
func hasLine(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
