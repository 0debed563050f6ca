package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestNamespaceScoped (testdata/e2e/namespace-scoped.yaml): a controller with
// --namespaced and only a Role and RoleBinding (no cluster-wide role of its
// own) starts without a Forbidden error, runs a canary with a step plugin in
// its namespace, and leaves a Rollout in another namespace alone. The
// upstream run uses the release's namespace-install.yaml.
func TestNamespaceScoped(t *testing.T) {
	t.Parallel()
	file := "namespace-scoped.yaml"
	for _, src := range []source{
		{"rendered", renderedInstall},
		{"upstream", func(t *testing.T, rel Release, file string) []*unstructured.Unstructured {
			return upstreamManifest(t, rel, "namespace-install.yaml", "Role", file)
		}},
	} {
		t.Run(src.name, func(t *testing.T) {
			c, objs := installSource(t, src, release(t, DefaultVersion), file)
			for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
				if Find(objs, kind, "argo-rollouts") != nil {
					t.Fatalf("a namespace-scoped installation with a %s argo-rollouts", kind)
				}
			}
			ctl := startController(t, c, objs)
			ctx := context.Background()
			if err := c.EnsureNamespace(ctx, "elsewhere"); err != nil {
				t.Fatal(err)
			}
			applyScenario(t, c, canaryRollout("scoped", "[{plugin: {name: step/e2e-test, config: {return: Successful}}}]"))
			other := mustDecodeOne(t, strings.ReplaceAll(canaryRollout("other", "[{setWeight: 50}]"), "namespace: argo-rollouts", "namespace: elsewhere"))
			applyTwice(t, c, []*unstructured.Unstructured{other}, "elsewhere")
			waitHealthy(t, c, ns, "scoped", time.Minute)
			newRevision(t, c, "scoped", "example.invalid/scoped:v2", "")
			waitHealthy(t, c, ns, "scoped", 2*time.Minute)
			o, err := c.Dynamic.Resource(rolloutsGVR).Namespace("elsewhere").Get(ctx, "other", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if status, ok := o.Object["status"]; ok {
				t.Errorf("the namespace-scoped controller reconciled a Rollout in another namespace: status %v", status)
			}
			if strings.Contains(ctl.Log(), "forbidden") {
				t.Errorf("the controller was refused something:\n%s", grepLines(ctl.Log(), "forbidden"))
			}
		})
	}
}

// TestHA (testdata/e2e/ha.yaml): two replicas with `--leader-elect true`.
// Two controllers started from the Deployment elect one leader (the Lease
// names it, the other waits), the leader reconciles; when the leader's pod
// ends, the other takes over and reconciles the next revision.
func TestHA(t *testing.T) {
	t.Parallel()
	objs := renderObjs(t, "ha.yaml")
	c := newCluster(t, release(t, DefaultVersion))
	ctx := context.Background()
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, objs, ns)
	dep := liveDeployment(t, c)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Fatalf("replicas %v, want 2", dep.Spec.Replicas)
	}
	pods := []*Controller{launchLiveController(t, c, fastLease...), launchLiveController(t, c, fastLease...)}
	leader := func() (int, string) {
		for i, p := range pods {
			if ok, _ := p.Exited(); !ok && strings.Contains(p.Log(), "I am the new leader") {
				return i, p.Log()
			}
		}
		return -1, ""
	}
	waitFor(t, time.Minute, "a leader", func() (bool, error) { i, _ := leader(); return i >= 0, nil })
	first, _ := leader()
	follower := pods[1-first]
	if err := follower.WaitForLog(ctx, "New leader elected", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(follower.Log(), "Started controller") {
		t.Fatal("both replicas started their controllers")
	}
	holder := leaseHolder(t, c)
	if !strings.Contains(pods[first].Log(), "I am the new leader: "+holder) {
		t.Errorf("the Lease names %q, not the leader", holder)
	}
	applyScenario(t, c, canaryRollout("ha", "[{setWeight: 50}, {pause: {duration: 1s}}]"))
	waitHealthy(t, c, ns, "ha", time.Minute)

	pods[first].Stop()
	if err := follower.WaitForLog(ctx, "I am the new leader", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := follower.WaitForLog(ctx, "Started controller", time.Minute); err != nil {
		t.Fatal(err)
	}
	if h := leaseHolder(t, c); h == holder {
		t.Errorf("the Lease still names the stopped leader %q", h)
	}
	newRevision(t, c, "ha", "example.invalid/ha:v2", "")
	waitHealthy(t, c, ns, "ha", 2*time.Minute)
	if !hasLine(follower.Log(), "Reconciliation completed", "rollout=ha") {
		t.Error("the new leader never reconciled the Rollout")
	}
}

func leaseHolder(t *testing.T, c *Cluster) string {
	t.Helper()
	l, err := c.Kube.CoordinationV1().Leases(ns).Get(context.Background(), "argo-rollouts-controller-lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestHTTPSPluginDownload: a plugin downloaded over https from a loopback
// server (the CA reaches the controller through the RolloutManager's env,
// SSL_CERT_FILE), pinned by sha256, with an Authorization header from a
// Secret named in headersFrom, which the server requires. First the digest
// is wrong: the controller refuses to start (in a cluster: CrashLoopBackOff).
// The next sync fixes it: the checksum changes, the controller rolls,
// downloads with the header, and runs the plugin as a step.
func TestHTTPSPluginDownload(t *testing.T) {
	t.Parallel()
	rel := release(t, DefaultVersion)
	binary, err := os.ReadFile(filepath.Join(rel.PluginDir, "step-plugin-e2e"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(binary)
	const token = "Bearer e2e-download-token"
	var served, refused atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != token {
			refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		served.Add(1)
		_, _ = w.Write(binary)
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	manager := func(digest string) []*unstructured.Unstructured {
		rm := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata: {name: rollouts, namespace: argo-rollouts}
spec:
  env:
  - {name: SSL_CERT_FILE, value: %q}
  plugins:
    step:
    - name: step/e2e-https
      location: %s/releases/step-plugin-e2e
      sha256: %s
      headersFrom:
      - secretRef: {name: plugin-download-auth}
`, ca, srv.URL, digest)
		return renderObjs(t, writeTempName(t, "https-plugin.yaml", rm))
	}

	c := newCluster(t, rel)
	ctx := context.Background()
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// Filled out of band, like the notification Secret.
	if _, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "plugin-download-auth"},
		StringData: map[string]string{"Authorization": token},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	applyTwice(t, c, manager(strings.Repeat("0", 64)), ns)
	broken := launchLiveController(t, c)
	if exited, _ := broken.WaitExit(2 * time.Minute); !exited {
		t.Fatal("the controller runs with a plugin whose digest does not match")
	}
	if !hasLine(broken.Log(), "level=fatal", "Failed to download plugins", "sha256") {
		t.Errorf("no fatal sha256 error in the log:\n%s", grepLines(broken.Log(), "level=fatal"))
	}

	applyTwice(t, c, manager(hex.EncodeToString(sum[:])), ns)
	ctl := rollController(t, c, broken)
	if got := installedPlugins(t, ctl); !slices.Equal(got, []string{"step/e2e-https"}) {
		t.Errorf("installed plugins %v, want step/e2e-https", got)
	}
	if served.Load() < 2 || refused.Load() != 0 {
		t.Errorf("the server served %d downloads and refused %d, want 2 served (one per start) and none refused", served.Load(), refused.Load())
	}
	applyScenario(t, c, canaryRollout("https", "[{plugin: {name: step/e2e-https, config: {return: Successful}}}]"))
	waitHealthy(t, c, ns, "https", time.Minute)
	newRevision(t, c, "https", "example.invalid/https:v2", "")
	waitHealthy(t, c, ns, "https", 2*time.Minute)
	ro, err := getRollout(c, ns, "https")
	if err != nil {
		t.Fatal(err)
	}
	sts, _, _ := unstructured.NestedSlice(ro.Object, "status", "canary", "stepPluginStatuses")
	if len(sts) == 0 || stringOf(sts[0].(map[string]any)["phase"]) != "Successful" {
		t.Errorf("stepPluginStatuses %v, want step/e2e-https Successful", sts)
	}
}

// TestServiceMonitor (testdata/e2e/service-monitor.yaml, rendered with
// --api-versions monitoring.coreos.com/v1, as Argo CD passes the cluster's
// API versions): the ServiceMonitor is accepted by the prometheus-operator's
// own CRD (v0.85.0, strict server-side apply) and selects the rendered
// metrics Service by its labels and port name.
func TestServiceMonitor(t *testing.T) {
	t.Parallel()
	crd := os.Getenv("E2E_SERVICEMONITOR_CRD")
	if crd == "" {
		t.Fatal("E2E_SERVICEMONITOR_CRD is not set (conformance/e2e/run.sh sets it)")
	}
	objs := renderObjs(t, "service-monitor.yaml", "--api-versions", "apps/v1,monitoring.coreos.com/v1")
	sm, svc := Find(objs, "ServiceMonitor", "argo-rollouts"), Find(objs, "Service", "argo-rollouts-metrics")
	if sm == nil || svc == nil {
		t.Fatal("no ServiceMonitor argo-rollouts or Service argo-rollouts-metrics rendered")
	}
	c := newClusterCRDs(t, release(t, DefaultVersion).CRDDir(), crd)
	ctx := context.Background()
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, objs, ns)
	live, err := c.Get(ctx, sm)
	if err != nil {
		t.Fatal(err)
	}
	sel, _, _ := unstructured.NestedStringMap(live.Object, "spec", "selector", "matchLabels")
	for k, v := range sel {
		if svc.GetLabels()[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s; the metrics Service has labels %v", k, v, svc.GetLabels())
		}
	}
	if len(sel) == 0 {
		t.Error("the ServiceMonitor selects nothing")
	}
	eps, _, _ := unstructured.NestedSlice(live.Object, "spec", "endpoints")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, e := range eps {
		port := e.(map[string]any)["port"]
		if !slices.ContainsFunc(ports, func(p any) bool { return p.(map[string]any)["name"] == port }) {
			t.Errorf("ServiceMonitor endpoint port %v is not a port of the metrics Service", port)
		}
	}
}

// writeTempName writes data to name in a fresh temporary directory.
func writeTempName(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
