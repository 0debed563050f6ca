package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	"github.com/argoproj/argo-cd/v3/util/git"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

var (
	img    *image
	server string
	// side is the sidecar serving the image's own plugin.yaml; every scenario uses it.
	side *sidecar
)

// TestMain starts the sidecar once. Without the image or the server it fails: run.sh
// provides both, and a harness that skipped would prove nothing.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	server = os.Getenv("RR_CMP_SERVER")
	dir := os.Getenv("RR_IMAGE_DIR")
	if server == "" || dir == "" {
		fmt.Fprintln(os.Stderr, "argocd harness: RR_CMP_SERVER and RR_IMAGE_DIR are required (run conformance/argocd/run.sh)")
		return 2
	}
	var err error
	if img, err = loadImage(dir); err != nil {
		fmt.Fprintln(os.Stderr, "argocd harness:", err)
		return 2
	}
	if side, err = startSidecar(img, server, nil); err != nil {
		fmt.Fprintln(os.Stderr, "argocd harness:", err)
		return 2
	}
	defer side.stop()
	code := m.Run()
	if os.Getenv("RR_SIDECAR_LOG") != "" {
		_ = os.WriteFile(os.Getenv("RR_SIDECAR_LOG"), []byte(side.log.String()), 0o644)
	}
	return code
}

// repo is a Git checkout as the repo-server holds it, with the application in apps/rollouts.
type repo struct {
	root string
}

const appPath = "apps/rollouts"

func newRepo(t testing.TB, files map[string]string) *repo {
	t.Helper()
	r := &repo{root: t.TempDir()}
	write := func(name, text string) {
		path := filepath.Join(r.root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# platform\n")
	write(".git/HEAD", "ref: refs/heads/main\n")
	write("apps/other/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\n")
	for name, text := range files {
		write(filepath.Join(appPath, name), text)
	}
	return r
}

func (r *repo) app() string { return filepath.Join(r.root, appPath) }

// application is what the repo-server is asked for: an Application's source and the
// destination cluster's facts, as the application controller sends them.
type application struct {
	name, namespace string
	// source is spec.source as a user writes it (path and repoURL are filled in).
	source      string
	kubeVersion string
	apiVersions []string
}

const (
	repoURL  = "https://git.example.com/platform.git"
	revision = "0123456789abcdef0123456789abcdef01234567"
	appName  = "argo-rollouts"
	appNS    = "argo-rollouts"
)

func defaultApp(source string) application {
	return application{name: appName, namespace: appNS, source: source, kubeVersion: "v1.33.2",
		apiVersions: []string{"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "networking.k8s.io/v1"}}
}

// generate runs reposerver/repository.GenerateManifests, the repo-server's own manifest
// generation: source type detection (plugin discovery over the sockets), the plugin env and
// parameters, the tarball stream to the sidecar, splitting and tracking. ctx carries the
// deadline the application controller would give (60 s by default).
func (r *repo) generate(ctx context.Context, s *sidecar, a application) (*apiclient.ManifestResponse, error) {
	// The repo-server looks for plugin sockets in this directory (read at every call).
	os.Setenv(common.EnvPluginSockFilePath, s.plugins)
	var source v1alpha1.ApplicationSource
	if err := yaml.UnmarshalStrict([]byte(a.source), &source); err != nil {
		return nil, fmt.Errorf("bad source in the test: %w", err)
	}
	source.RepoURL, source.Path, source.TargetRevision = repoURL, appPath, "main"
	q := &apiclient.ManifestRequest{
		Repo:              &v1alpha1.Repository{Repo: repoURL},
		Revision:          revision,
		AppLabelKey:       common.LabelKeyAppInstance,
		AppName:           a.name,
		Namespace:         a.namespace,
		ApplicationSource: &source,
		KubeVersion:       a.kubeVersion,
		ApiVersions:       a.apiVersions,
		TrackingMethod:    string(v1alpha1.TrackingMethodAnnotation),
		ProjectName:       "default",
	}
	return repository.GenerateManifests(ctx, r.app(), r.root, revision, q, false, git.NoopCredsStore{},
		resource.MustParse("10M"), utilio.NewRandomizedTempPaths(filepath.Join(os.TempDir(), "argocd-repo-paths")))
}

// controllerTimeout is the application controller's default repo-server timeout
// (--repo-server-timeout-seconds): the deadline every manifest generation runs under.
const controllerTimeout = 60 * time.Second

func mustGenerate(t *testing.T, r *repo, a application) *apiclient.ManifestResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()
	response, err := r.generate(ctx, side, a)
	if err != nil {
		t.Fatalf("Argo CD's manifest generation failed: %v", err)
	}
	return response
}

type object = map[string]any

// received is what Argo CD got, each object without the tracking annotation the repo-server
// added; it checks that annotation first.
func received(t *testing.T, a application, response *apiclient.ManifestResponse) []object {
	t.Helper()
	if response.SourceType != string(v1alpha1.ApplicationSourceTypePlugin) {
		t.Fatalf("source type %q, not Plugin", response.SourceType)
	}
	var objects []object
	for _, manifest := range response.Manifests {
		var obj object
		if err := json.Unmarshal([]byte(manifest), &obj); err != nil {
			t.Fatalf("manifest is not JSON: %v", err)
		}
		meta := obj["metadata"].(object)
		annotations, _ := meta["annotations"].(object)
		gv, _ := schema.ParseGroupVersion(obj["apiVersion"].(string))
		ns, _ := meta["namespace"].(string)
		if ns == "" {
			ns = a.namespace
		}
		want := fmt.Sprintf("%s:%s/%s:%s/%s", a.name, gv.Group, obj["kind"], ns, meta["name"])
		if got := annotations[common.AnnotationKeyAppInstance]; got != want {
			t.Errorf("%s/%s: tracking annotation %v, want %q", obj["kind"], meta["name"], got, want)
		}
		delete(annotations, common.AnnotationKeyAppInstance)
		if len(annotations) == 0 {
			delete(meta, "annotations")
		}
		objects = append(objects, obj)
	}
	return objects
}

// render runs the image's rollouts-render render in the application directory, as a user
// would on a checkout, and reads its objects as Kubernetes does.
func render(t *testing.T, r *repo, flags ...string) []object {
	t.Helper()
	cmd := exec.Command(img.binary, append(append([]string{"render"}, flags...), ".")...)
	cmd.Dir = r.app()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render %v: %v: %s", flags, err, stderr.String())
	}
	return readObjects(t, out)
}

func readObjects(t *testing.T, data []byte) []object {
	t.Helper()
	decoder := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []object
	for {
		var obj object
		if err := decoder.Decode(&obj); err == io.EOF {
			return objects
		} else if err != nil {
			t.Fatalf("reading render's output: %v", err)
		}
		if obj != nil {
			objects = append(objects, obj)
		}
	}
}

// sameObjects compares two object lists in order and names every difference.
func sameObjects(t *testing.T, got, want []object) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("Argo CD received %d objects, render prints %d:\n got %s\nwant %s", len(got), len(want), names(got), names(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.MarshalIndent(got[i], "", "  ")
			w, _ := json.MarshalIndent(want[i], "", "  ")
			t.Errorf("object %d differs:\nArgo CD received %s\nrender prints %s", i, g, w)
		}
	}
}

func names(objects []object) string {
	var out []string
	for _, o := range objects {
		out = append(out, fmt.Sprintf("%v/%v", o["kind"], o["metadata"].(object)["name"]))
	}
	return strings.Join(out, ", ")
}

func kinds(objects []object) []string {
	var out []string
	for _, o := range objects {
		out = append(out, fmt.Sprint(o["kind"]))
	}
	sort.Strings(out)
	return out
}

func find(t *testing.T, objects []object, kind string) object {
	t.Helper()
	for _, o := range objects {
		if o["kind"] == kind {
			return o
		}
	}
	t.Fatalf("no %s among %s", kind, names(objects))
	return nil
}
