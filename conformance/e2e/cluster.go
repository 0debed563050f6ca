package e2e

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Cluster is a kube-apiserver + etcd pair started by envtest from the
// binaries built under conformance/tools (found through envtest's own
// TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD variables), with admin clients.
// There is no kubelet, scheduler or controller-manager: nothing runs pods,
// garbage-collects or finishes namespace deletion.
type Cluster struct {
	env     *envtest.Environment
	Config  *rest.Config // admin (system:masters)
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	// KubeconfigPath is an admin kubeconfig file for kubectl (in envtest's
	// temporary directory, removed by Stop).
	KubeconfigPath string
}

// StartCluster starts the control plane and installs every CRD found in
// crdDirs before returning, so controllers started later see synced caches.
// featureGates are the API server's --feature-gates (e.g. "ImageVolume=true").
func StartCluster(crdDirs []string, featureGates ...string) (*Cluster, error) {
	// envtest logs through controller-runtime's logger, which otherwise
	// complains (with a stack trace) that it was never set.
	setLogger.Do(func() {
		ctrllog.SetLogger(funcr.New(func(prefix, args string) { log.Println("envtest:", prefix, args) }, funcr.Options{}))
	})
	for _, name := range []string{"TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD"} {
		p := os.Getenv(name)
		if p == "" {
			return nil, fmt.Errorf("%s is not set (conformance/e2e/run.sh sets it)", name)
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     crdDirs,
		ErrorIfCRDPathMissing: true,
		// The first start on a cold, shared 2-core machine is slow.
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
		// Installing the CRDs waits for them to be served; the default 10 s ran out
		// under load ("context deadline exceeded").
		CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 2 * time.Minute},
	}
	for _, gate := range featureGates {
		env.ControlPlane.GetAPIServer().Configure().Append("feature-gates", gate)
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	c := &Cluster{env: env, Config: cfg}
	if err := c.connect(); err != nil {
		_ = env.Stop()
		return nil, err
	}
	c.KubeconfigPath = filepath.Join(env.ControlPlane.APIServer.CertDir, "e2e-admin.kubeconfig")
	if err := os.WriteFile(c.KubeconfigPath, env.KubeConfig, 0o600); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return c, nil
}

// Kubectl runs the kubectl of E2E_KUBECTL (run.sh sets it) as the cluster's
// admin and returns its combined output; a non-zero exit is an error that
// carries the output.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	bin := os.Getenv("E2E_KUBECTL")
	if bin == "" {
		return "", fmt.Errorf("E2E_KUBECTL is not set (conformance/e2e/run.sh sets it)")
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", c.KubeconfigPath}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

var setLogger sync.Once

func (c *Cluster) connect() error {
	var err error
	if c.Kube, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	if c.Dynamic, err = dynamic.NewForConfig(c.Config); err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return err
	}
	c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return nil
}

// Stop ends apiserver and etcd and removes their temporary directories.
func (c *Cluster) Stop() error { return c.env.Stop() }

// RESTMapping maps a kind to its resource, refreshing discovery once on a
// miss (CRDs applied after the first lookup).
func (c *Cluster) RESTMapping(apiVersion, kind string) (*meta.RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	m, err := c.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	}
	return m, err
}

// EnsureNamespace creates ns if missing. Rendered output never contains its
// own Namespace (Argo CD's CreateNamespace option or the user makes it).
func (c *Cluster) EnsureNamespace(ctx context.Context, ns string) error {
	_, err := c.Kube.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// crdDirsFromEnv reads E2E_CRD_DIRS, a list of directories separated like PATH.
func crdDirsFromEnv() ([]string, error) {
	v := os.Getenv("E2E_CRD_DIRS")
	if v == "" {
		return nil, fmt.Errorf("E2E_CRD_DIRS is not set (conformance/e2e/run.sh sets it)")
	}
	var dirs []string
	for _, d := range filepath.SplitList(v) {
		if d = strings.TrimSpace(d); d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}
