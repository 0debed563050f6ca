package conformance

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/utils/config"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	"github.com/argoproj/argo-rollouts/utils/plugin"
	"github.com/sirupsen/logrus"
	yamlv2 "gopkg.in/yaml.v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestDownloaderAgrees installs plugins with Argo Rollouts' own downloader
// (utils/plugin.DownloadPlugins, the code the controller runs at start-up)
// from a file:// path and from a loopback HTTP server, and checks that the
// renderer accepts exactly the entries the downloader can install: what the
// renderer rejects (sha1-looking or upper-case digests, other schemes) fails
// upstream too, and a well-formed but wrong digest, which no renderer can
// detect, fails at download as the contract says.
func TestDownloaderAgrees(t *testing.T) {
	logrus.SetOutput(io.Discard)
	defer logrus.SetOutput(os.Stderr)

	binary := []byte("#!/bin/sh\necho rollouts-render conformance plugin\n")
	sum := sha256.Sum256(binary)
	good := hex.EncodeToString(sum[:])
	other := sha256.Sum256([]byte("something else"))
	wrong := hex.EncodeToString(other[:])
	s1 := sha1.Sum(binary)
	sha1Hex := hex.EncodeToString(s1[:])

	const secretName, token = "plugin-download-auth", "Bearer conformance"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/plugin":
		case "/private":
			if r.Header.Get("Authorization") != token {
				http.Error(w, "no", http.StatusForbidden)
				return
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Write(binary)
	}))
	defer srv.Close()

	// The controller's /tmp is an emptyDir, so the renderer refuses file:
	// locations there; t.TempDir() is usually under /tmp, so the source
	// binary goes to the user's cache directory, which go test needs anyway.
	src := filepath.Join(fileSourceDir(t), "plugin-src")
	if err := os.WriteFile(src, binary, 0o755); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, location, sha256 string
		headersFrom            string
		rendererAccepts        bool
		downloads              bool
	}{
		{name: "http-correct-sha256", location: srv.URL + "/plugin", sha256: good, rendererAccepts: true, downloads: true},
		{name: "http-no-sha256", location: srv.URL + "/plugin", rendererAccepts: true, downloads: true},
		{name: "http-headers-from-secret", location: srv.URL + "/private", sha256: good, headersFrom: secretName, rendererAccepts: true, downloads: true},
		{name: "http-wrong-sha256", location: srv.URL + "/plugin", sha256: wrong, rendererAccepts: true, downloads: false},
		{name: "http-sha1-looking-digest", location: srv.URL + "/plugin", sha256: sha1Hex, rendererAccepts: false, downloads: false},
		{name: "http-upper-case-sha256", location: srv.URL + "/plugin", sha256: strings.ToUpper(good), rendererAccepts: false, downloads: false},
		{name: "http-not-found", location: srv.URL + "/missing", rendererAccepts: true, downloads: false},
		{name: "file", location: "file://" + src, rendererAccepts: true, downloads: true},
		// The downloader never checks a file: digest; the renderer only warns.
		{name: "file-wrong-sha256", location: "file://" + src, sha256: wrong, rendererAccepts: true, downloads: true},
		{name: "ftp-scheme", location: "ftp://127.0.0.1/plugin", rendererAccepts: false, downloads: false},
	}
	const ns = "rr-downloader"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "conformance/" + c.name
			entry := inputPlugin{Name: name, Location: c.location, Sha256: c.sha256}
			if c.headersFrom != "" {
				entry.HeadersFrom = headersFrom(c.headersFrom)
			}
			input := managerYAML(ns, nil, []inputPlugin{entry}, nil)
			res := runBinary(t, "render", writeTemp(t, input))
			var cm *corev1.ConfigMap
			switch {
			case res.code == 0 && c.rendererAccepts:
				cms, problems := configMaps(res.stdout)
				report(t, problems)
				if len(cms) != 1 {
					t.Fatalf("want one ConfigMap, got %d", len(cms))
				}
				cm = cms[0]
			case res.code == 1 && !c.rendererAccepts:
				// What a tool without those checks would write (the operator's
				// own encoding), to show the controller fails on it.
				b, _ := yamlv2.Marshal([]map[string]string{{"name": name, "location": c.location, "sha256": c.sha256}})
				cm = &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: defaults.DefaultRolloutsConfigMapName, Namespace: ns},
					Data:       map[string]string{"trafficRouterPlugins": "[]\n", "metricProviderPlugins": string(b)},
				}
			default:
				t.Fatalf("renderer exit %d, want accepted=%v; stderr:\n%s", res.code, c.rendererAccepts, res.stderr)
			}

			t.Chdir(t.TempDir()) // the downloader writes ./plugin-bin
			t.Setenv("POD_NAMESPACE", ns)
			defer config.UnInitializeConfig()
			if _, err := loadWithArgoRollouts(cm); err != nil {
				t.Fatalf("config: %v", err)
			}
			secrets := fake.NewSimpleClientset(&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
				Data:       map[string][]byte{"Authorization": []byte(token)},
			})
			err := plugin.DownloadPlugins(plugin.FileDownloaderImpl{}, secrets)
			switch {
			case c.downloads && err != nil:
				t.Fatalf("Argo Rollouts cannot install it: %v", err)
			case !c.downloads && err == nil:
				t.Fatalf("Argo Rollouts installed it; want a failure")
			case !c.downloads:
				t.Logf("fails upstream as expected: %v", err)
				return
			}
			got, err := os.ReadFile(filepath.Join("plugin-bin", name))
			if err != nil || !bytes.Equal(got, binary) {
				t.Fatalf("installed plugin: %v (%d bytes)", err, len(got))
			}
		})
	}
}

// fileSourceDir is a fresh directory outside /tmp, removed after the test.
func fileSourceDir(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory for a file: plugin outside /tmp: %v", err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, "rr-downloader-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if dir == "/tmp" || strings.HasPrefix(dir, "/tmp/") {
		t.Skipf("the user cache directory %s is under /tmp, which the renderer refuses for file: plugins", dir)
	}
	return dir
}
