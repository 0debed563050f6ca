package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The Argo Rollouts releases whose RBAC the rendered roles must equal. v1.9.1 is
// the default controller version (and in this module's build list); v1.10.2 is
// the newest release the README supports. Both are read from the module cache.
const (
	rolloutsModule     = "github.com/argoproj/argo-rollouts"
	rolloutsNewVersion = "v1.10.2"
	// v1.10.2's go.mod says go 1.26.10: `go mod download` refuses it under an older
	// local toolchain unless it may fetch that one (through the module proxy).
	rolloutsNewToolchain = "GOTOOLCHAIN=go1.26.10"
)

// extraControllerRule is the one rule the rendered controller role has beyond
// upstream's: the operator's own, for its OpenShift route plugin (README,
// "Deliberate differences").
var extraControllerRule = rbacv1.PolicyRule{
	APIGroups: []string{"route.openshift.io"},
	Resources: []string{"routes"},
	Verbs:     []string{"create", "watch", "get", "update", "patch", "list"},
}

// TestControllerRulesMatchUpstream: the README promises that the controller's
// role carries upstream install.yaml's rules, verb for verb (the operator's
// ingresses rule lacks `update`, which the controller's ALB path calls; its
// deployments rule adds `patch`). Every rule of upstream's ClusterRole
// `argo-rollouts` (install.yaml) and Role `argo-rollouts`
// (namespace-install.yaml) must be in the rendered role with exactly the same
// verbs, the rendered role may add only extraControllerRule, and the
// aggregate ClusterRoles must grant what upstream's do.
func TestControllerRulesMatchUpstream(t *testing.T) {
	releases := map[string]func(t *testing.T) string{
		"v1.9.1": func(t *testing.T) string { return buildListModuleDir(t, rolloutsModule) },
		rolloutsNewVersion: func(t *testing.T) string {
			dir, err := downloadModule(rolloutsModule+"@"+rolloutsNewVersion, rolloutsNewToolchain)
			if err != nil {
				t.Fatalf("go mod download %s@%s: %v", rolloutsModule, rolloutsNewVersion, err)
			}
			return dir
		},
	}
	clusterWide := roles(t, "rendered minimal.yaml", renderOK(t, "render", filepath.Join(repoRoot(), "testdata", "minimal.yaml")))
	namespaced := roles(t, "rendered namespace-scoped.yaml", renderOK(t, "render", filepath.Join(repoRoot(), "testdata", "namespace-scoped.yaml")))
	for _, version := range []string{"v1.9.1", rolloutsNewVersion} {
		t.Run(version, func(t *testing.T) {
			dir := releases[version](t)
			for _, c := range []struct {
				file     string
				kind     string
				rendered map[string][]rbacv1.PolicyRule
			}{
				{"install.yaml", "ClusterRole", clusterWide},
				{"namespace-install.yaml", "Role", namespaced},
			} {
				data, err := os.ReadFile(filepath.Join(dir, "manifests", c.file))
				if err != nil {
					t.Fatal(err)
				}
				up := roles(t, version+" "+c.file, data)
				key := c.kind + "/argo-rollouts"
				if len(up[key]) < 20 {
					t.Fatalf("%s %s: %s has %d rules; not the installation this test knows", version, c.file, key, len(up[key]))
				}
				for _, p := range ruleProblems(up[key], c.rendered[key], []rbacv1.PolicyRule{extraControllerRule}) {
					t.Errorf("%s (rendered) vs %s %s: %s", key, version, c.file, p)
				}
				// The check itself: the operator's verbs (README, "Deliberate differences")
				// differ from upstream's in exactly the two rules the README names.
				op := operatorRules(c.rendered[key])
				if got := ruleProblems(up[key], op, []rbacv1.PolicyRule{extraControllerRule}); len(got) != 2 ||
					!strings.Contains(got[0]+got[1], "deployments") || !strings.Contains(got[0]+got[1], "ingresses") {
					t.Errorf("the operator's rules vs %s %s: %q, want the deployments and ingresses differences", version, c.file, got)
				}
				if c.kind != "ClusterRole" {
					continue
				}
				for _, agg := range []string{"admin", "edit", "view"} {
					key := "ClusterRole/argo-rollouts-aggregate-to-" + agg
					for _, p := range ruleProblems(up[key], c.rendered[key], nil) {
						t.Errorf("%s (rendered) vs %s %s: %s", key, version, c.file, p)
					}
				}
			}
		})
	}
}

// ruleProblems compares two rule lists as RBAC does: a rule is its API groups,
// resources, resource names and non-resource URLs (as sets), and grants its
// verbs (as a set); order does not matter. Rules of ours that upstream lacks
// must be among allowedExtra.
func ruleProblems(upstream, ours, allowedExtra []rbacv1.PolicyRule) []string {
	var problems []string
	if len(upstream) == 0 {
		return []string{"upstream has no such role"}
	}
	if len(ours) == 0 {
		return []string{"not rendered"}
	}
	used := make([]bool, len(ours))
	for _, u := range upstream {
		i := slices.IndexFunc(ours, func(o rbacv1.PolicyRule) bool { return sameTarget(u, o) })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("upstream rule %s is missing", ruleText(u)))
			continue
		}
		used[i] = true
		if !sameSet(u.Verbs, ours[i].Verbs) {
			problems = append(problems, fmt.Sprintf("rule %s: verbs %v, upstream %v", ruleText(u), ours[i].Verbs, u.Verbs))
		}
	}
	for i, o := range ours {
		if used[i] {
			continue
		}
		if !slices.ContainsFunc(allowedExtra, func(a rbacv1.PolicyRule) bool { return sameTarget(a, o) && sameSet(a.Verbs, o.Verbs) }) {
			problems = append(problems, fmt.Sprintf("rule %s with verbs %v is not upstream's and not a documented difference", ruleText(o), o.Verbs))
		}
	}
	return problems
}

// operatorRules are rules with the operator's verbs where the README says
// they differ: ingresses without update, deployments/podtemplates with patch.
func operatorRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(rules))
	for i, r := range rules {
		r.Verbs = slices.Clone(r.Verbs)
		switch {
		case slices.Contains(r.Resources, "ingresses"):
			r.Verbs = slices.DeleteFunc(r.Verbs, func(v string) bool { return v == "update" })
		case slices.Contains(r.Resources, "deployments"):
			r.Verbs = append(r.Verbs, "patch")
		}
		out[i] = r
	}
	return out
}

func sameTarget(a, b rbacv1.PolicyRule) bool {
	return sameSet(a.APIGroups, b.APIGroups) && sameSet(a.Resources, b.Resources) &&
		sameSet(a.ResourceNames, b.ResourceNames) && sameSet(a.NonResourceURLs, b.NonResourceURLs)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func ruleText(r rbacv1.PolicyRule) string {
	return fmt.Sprintf("{apiGroups %q, resources %v}", r.APIGroups, r.Resources)
}

// roles reads every Role and ClusterRole of a manifest stream, keyed
// "Kind/name" (CRDs and the rest are skipped).
func roles(t *testing.T, what string, data []byte) map[string][]rbacv1.PolicyRule {
	t.Helper()
	out := map[string][]rbacv1.PolicyRule{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if u.Object == nil || (u.GetKind() != "Role" && u.GetKind() != "ClusterRole") {
			continue
		}
		var role rbacv1.ClusterRole // Role has the same rules field
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role); err != nil {
			t.Fatalf("%s: %s %s: %v", what, u.GetKind(), u.GetName(), err)
		}
		out[u.GetKind()+"/"+u.GetName()] = role.Rules
	}
	return out
}

// buildListModuleDir is the module cache directory of a module of this
// module's build list (its go.mod pins the version).
func buildListModuleDir(t *testing.T, mod string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", mod, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatalf("go list -m %s: no directory (module not downloaded?)", mod)
	}
	return dir
}
