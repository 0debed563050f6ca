package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// releaseCRDs decodes the CRDs of the release's manifests/crds (the files its
// kustomization.yaml lists; `kubectl kustomize` of the directory, as Argo CD
// and `kubectl apply -k` build it).
func releaseCRDs(t *testing.T, c *Cluster, rel Release) []*unstructured.Unstructured {
	t.Helper()
	out, err := c.Kubectl(context.Background(), "kustomize", rel.CRDDir())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := DecodeStream([]byte(out))
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", rel.CRDDir(), err)
	}
	if len(objs) != 5 {
		t.Fatalf("%s has %d objects, want the 5 Argo Rollouts CRDs", rel.CRDDir(), len(objs))
	}
	return objs
}

// applyCRDsTerminal installs the release's CRDs the README's terminal way,
// `kubectl apply --server-side -k <manifests/crds at the tag>` (the module's
// copy of that directory stands in for the GitHub URL: there is no network
// here), and waits until the API server serves them.
func applyCRDsTerminal(t *testing.T, c *Cluster, rel Release) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Kubectl(ctx, "apply", "--server-side", "-k", rel.CRDDir()); err != nil {
		t.Fatal(err)
	}
	waitCRDs(t, c, rel)
}

// waitCRDs waits until every CRD of the release is Established with the
// release's own schemas.
func waitCRDs(t *testing.T, c *Cluster, rel Release) {
	t.Helper()
	want := releaseCRDs(t, c, rel)
	waitFor(t, time.Minute, rel.Version+" CRDs established", func() (bool, error) {
		for _, crd := range want {
			live, err := c.Dynamic.Resource(crdGVR).Get(context.Background(), crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, client404(err)
			}
			if !crdEstablished(live) {
				return false, nil
			}
			lv, _, _ := unstructured.NestedSlice(live.Object, "spec", "versions")
			wv, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			if !reflect.DeepEqual(schemas(lv), schemas(wv)) {
				return false, nil
			}
		}
		return true, nil
	})
}

func crdEstablished(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// schemas maps each CRD version to its OpenAPI schema.
func schemas(versions []any) map[string]any {
	out := map[string]any{}
	for _, v := range versions {
		m, _ := v.(map[string]any)
		s, _, _ := unstructured.NestedFieldNoCopy(m, "schema", "openAPIV3Schema")
		out[fmt.Sprint(m["name"])] = s
	}
	return out
}

// TestTerminalInstall follows the README's quick start in a terminal, for
// each release: upstream's CRDs with `kubectl apply --server-side -k`, then
// `rollouts-render render rolloutmanager.yaml | kubectl apply --server-side
// -f -` for a RolloutManager whose spec.version is the release's tag. The
// controller (the release the rendered image names) starts and reconciles a
// Rollout. Client-side apply is shown refused for v1.10 and later: the
// last-applied annotation of its CRDs is over the API server's limit.
func TestTerminalInstall(t *testing.T) {
	t.Parallel()
	forEachRelease(t, func(t *testing.T, rel Release) {
		c := newClusterCRDs(t)
		ctx := context.Background()
		applyCRDsTerminal(t, c, rel)

		out, err := c.Kubectl(ctx, "apply", "--dry-run=server", "-k", rel.CRDDir())
		v110 := strings.HasPrefix(rel.Version, "v1.10.")
		switch {
		case v110 && err == nil:
			t.Errorf("client-side apply of the %s CRDs was accepted; the README says it is refused", rel.Version)
		case v110 && !strings.Contains(out, "Too long"):
			t.Errorf("client-side apply of the %s CRDs failed, but not for the annotation's size:\n%s", rel.Version, out)
		default:
			if lines := grepLines(out, "Too long"); lines != "" {
				out = lines
			}
			t.Logf("client-side apply (server dry run) of the %s CRDs: failed %v: %.300s", rel.Version, err != nil, out)
		}

		rm := filepath.Join(t.TempDir(), "rolloutmanager.yaml")
		manager := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata: {name: rollouts, namespace: %s}\nspec:\n  version: %s\n", ns, rel.Version)
		if err := os.WriteFile(rm, []byte(manager), 0o644); err != nil {
			t.Fatal(err)
		}
		bin, err := RenderBinary()
		if err != nil || bin == "" {
			t.Fatalf("ROLLOUTS_RENDER: %v (%q)", err, bin)
		}
		if err := c.EnsureNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		// The README's pipe, run by a shell as written there.
		pipe := exec.Command("bash", "-o", "pipefail", "-c",
			`"$RR" render "$RM" | "$KUBECTL" --kubeconfig "$KUBECONFIG_FILE" apply --server-side -f -`)
		pipe.Env = append(os.Environ(), "RR="+bin, "RM="+rm, "KUBECTL="+os.Getenv("E2E_KUBECTL"), "KUBECONFIG_FILE="+c.KubeconfigPath)
		if out, err := pipe.CombinedOutput(); err != nil {
			t.Fatalf("rollouts-render render | kubectl apply --server-side -f -: %v\n%s", err, out)
		}
		ctl := startLiveController(t, c)
		if ctl.Release.Version != rel.Version {
			t.Fatalf("the rendered Deployment runs %s, want %s", ctl.Release.Version, rel.Version)
		}
		applyScenario(t, c, canaryRollout("quickstart", "[{setWeight: 50}, {pause: {duration: 1s}}]"))
		waitHealthy(t, c, ns, "quickstart", time.Minute)
		newRevision(t, c, "quickstart", "example.invalid/quickstart:v2", "")
		waitHealthy(t, c, ns, "quickstart", 2*time.Minute)
	})
}

// argoApplication is the part of an Argo CD Application this harness acts on.
type argoApplication struct {
	Spec struct {
		Sources []struct {
			RepoURL        string `json:"repoURL"`
			TargetRevision string `json:"targetRevision"`
			Path           string `json:"path"`
			Plugin         *struct {
				Name       string            `json:"name"`
				Parameters []json.RawMessage `json:"parameters"`
				Env        []struct {
					Name  string `json:"name"`
					Value string `json:"value"`
				} `json:"env"`
			} `json:"plugin"`
		} `json:"sources"`
		Destination struct {
			Namespace string `json:"namespace"`
		} `json:"destination"`
		SyncPolicy struct {
			SyncOptions []string `json:"syncOptions"`
		} `json:"syncPolicy"`
	} `json:"spec"`
}

// TestArgoCDApplicationInstallsCRDs: the GitOps way of the README,
// deploy/application.yaml. The Application is first created under Argo CD's
// own Application CRD (v3.2.5, from its Go module) with strict field
// validation. Then its sync is played as Argo CD does it: the source without
// a plugin is upstream's manifests/crds at its targetRevision (a directory
// with a kustomization.yaml: `kubectl kustomize`, from the module of that
// tag), the plugin source is `rollouts-render generate` run in a directory
// holding testdata/e2e/gitops/ (for the example repository the file names)
// with the environment Argo CD gives it (destination namespace, the
// source's parameters and env entries); everything is applied server-side
// (ServerSideApply=true), CRDs first as Argo CD orders them. The CRDs' tag
// must be the version the plugin renders; the controller starts and
// reconciles a Rollout.
func TestArgoCDApplicationInstallsCRDs(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(repoDir(t), "deploy", "application.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	appObj := mustDecodeOne(t, string(raw))
	var app argoApplication
	if j, err := yaml.YAMLToJSON(raw); err != nil || json.Unmarshal(j, &app) != nil {
		t.Fatalf("deploy/application.yaml: %v", err)
	}

	argoCRDs := os.Getenv("E2E_ARGOCD_CRDS")
	if argoCRDs == "" {
		t.Fatal("E2E_ARGOCD_CRDS is not set (conformance/e2e/run.sh sets it)")
	}
	c := newClusterCRDs(t, argoCRDs)
	ctx := context.Background()
	if err := c.EnsureNamespace(ctx, appObj.GetNamespace()); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, []*unstructured.Unstructured{appObj}, appObj.GetNamespace())

	if !containsString(app.Spec.SyncPolicy.SyncOptions, "ServerSideApply=true") {
		t.Errorf("syncOptions %v lack ServerSideApply=true (the v1.10 CRDs cannot be applied client-side)", app.Spec.SyncPolicy.SyncOptions)
	}
	if len(app.Spec.Sources) != 2 {
		t.Fatalf("%d sources, want 2 (upstream's CRDs and the plugin)", len(app.Spec.Sources))
	}
	var crdTag string
	var rendered []*unstructured.Unstructured
	for _, src := range app.Spec.Sources {
		if src.Plugin == nil {
			if strings.TrimSuffix(src.RepoURL, ".git") != "https://github.com/argoproj/argo-rollouts" || src.Path != "manifests/crds" {
				t.Fatalf("CRD source %s %s, want upstream's manifests/crds", src.RepoURL, src.Path)
			}
			crdTag = src.TargetRevision
			continue
		}
		if src.Plugin.Name != "rollouts-render" {
			t.Fatalf("plugin %q, want rollouts-render", src.Plugin.Name)
		}
		env := []string{"ARGOCD_APP_NAME=" + appObj.GetName(), "ARGOCD_APP_NAMESPACE=" + app.Spec.Destination.Namespace}
		params, _ := json.Marshal(src.Plugin.Parameters)
		env = append(env, "ARGOCD_APP_PARAMETERS="+string(params))
		for _, e := range src.Plugin.Env {
			env = append(env, "ARGOCD_ENV_"+e.Name+"="+e.Value)
		}
		rendered = generate(t, TestdataPath("gitops"), env)
	}
	rel := release(t, crdTag)
	crds := releaseCRDs(t, c, rel)
	if err := c.Apply(ctx, crds, ApplyOptions{}); err != nil {
		t.Fatalf("server-side apply of the %s CRDs: %v", crdTag, err)
	}
	waitCRDs(t, c, rel)
	if err := c.EnsureNamespace(ctx, app.Spec.Destination.Namespace); err != nil { // CreateNamespace=true
		t.Fatal(err)
	}
	applyTwice(t, c, rendered, app.Spec.Destination.Namespace)
	ctl := startLiveController(t, c)
	if ctl.Release.Version != crdTag {
		t.Fatalf("the plugin renders controller %s, the CRD source is at %s: they must match", ctl.Release.Version, crdTag)
	}
	applyScenario(t, c, canaryRollout("gitops", "[{setWeight: 50}, {pause: {duration: 1s}}]"))
	waitHealthy(t, c, ns, "gitops", time.Minute)
}

// generate runs `rollouts-render generate` in a copy of dir (Argo CD runs it
// in a fresh checkout) with stdin closed and env added, and decodes stdout.
func generate(t *testing.T, dir string, env []string) []*unstructured.Unstructured {
	t.Helper()
	bin, err := RenderBinary()
	if err != nil || bin == "" {
		t.Fatalf("ROLLOUTS_RENDER: %v (%q)", err, bin)
	}
	work := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "generate")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("rollouts-render generate: %v\n%s", err, errb.String())
	}
	if errb.Len() > 0 {
		t.Errorf("rollouts-render generate warned:\n%s", errb.String())
	}
	objs, err := DecodeStream(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// repoDir is the repository root (E2E_TESTDATA's grandparent, or ../.. of this package).
func repoDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join(TestdataPath("."), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return d
}
