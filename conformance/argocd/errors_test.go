package argocd

import (
	"context"
	"strings"
	"testing"
)

// The text Argo CD stores in the Application status when generation fails: the gRPC error
// of the repo-server, which holds the plugin's stderr.

// storedError generates through the repo-server and returns its error text.
func storedError(t *testing.T, r *repo, a application) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()
	_, err := r.generate(ctx, side, a)
	if err == nil {
		t.Fatal("generation succeeded")
	}
	t.Logf("Argo CD stores: %s", err)
	return err.Error()
}

// assertReadable: short, plain (no ANSI colour), and none of the secrets.
func assertReadable(t *testing.T, text string, limit int, secrets ...string) {
	t.Helper()
	if len(text) > limit {
		t.Errorf("the stored error is %d bytes, more than %d", len(text), limit)
	}
	if strings.ContainsRune(text, '\x1b') {
		t.Error("the stored error has escape codes")
	}
	for _, secret := range secrets {
		if strings.Contains(text, secret) {
			t.Errorf("the stored error repeats %q", secret)
		}
	}
}

const secretManager = `apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
spec:
  env:
  - name: API_TOKEN
    value: hunter2-manager-env
  imagePullPolicy: Sometimes
`

const secret = `apiVersion: v1
kind: Secret
metadata:
  name: token
stringData:
  token: hunter2-secret-data
  other: !!int hunter2-bad-tag
`

// TestInvalidRolloutManagerError: the stored error holds our located diagnostics, and no
// env value of the manager, the Secret's data or the Application's env entries.
func TestInvalidRolloutManagerError(t *testing.T) {
	r := newRepo(t, map[string]string{"rm.yaml": secretManager, "secret.yaml": secret})
	a := defaultApp(source(nil, map[string]string{"TOKEN": "hunter2-app-env"}))
	text := storedError(t, r, a)
	for _, want := range []string{
		"rm.yaml:9:20: error: spec.imagePullPolicy: `Sometimes` is not an image pull policy (use Always, IfNotPresent, Never)",
		"secret.yaml:7:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the stored error lacks %q", want)
		}
	}
	assertReadable(t, text, 1024, "hunter2")
}

// TestNoRolloutManagerError: named on a directory without a RolloutManager, Argo CD itself
// refuses (its discovery runs for named plugins too; see TestPluginByName); the sidecar's
// generate, asked directly, names the directory instead of rendering nothing.
func TestNoRolloutManagerError(t *testing.T) {
	r := newRepo(t, map[string]string{"rollout.yaml": rollout})
	text := storedError(t, r, defaultApp("plugin:\n  name: rollouts-render\n"))
	assertReadable(t, text, 512)

	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()
	_, err := grpcGenerate(ctx, side, r, pluginEnv())
	if err == nil {
		t.Fatal("generate succeeded on a directory without a RolloutManager")
	}
	want := "error: no RolloutManager found in the application directory `" + appPath + "`"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%v\nlacks %q", err, want)
	}
	assertReadable(t, err.Error(), 1024)
}

// TestHugeInputError: an application directory over the 16 MiB input limit is refused at
// once with one short line, nothing of its content.
func TestHugeInputError(t *testing.T) {
	padding := strings.Repeat("# hunter2-padding "+strings.Repeat("x", 64)+"\n", (17<<20)/83)
	r := newRepo(t, map[string]string{"big.yaml": padding, "rm.yaml": pinned})
	text := storedError(t, r, defaultApp(""))
	// The plugin's limit is fixed (the sidecar's memory is sized for it): named, and no
	// option offered that a plugin user cannot pass.
	if !strings.Contains(text, "big.yaml: error: the application's manifests are larger than the plugin's limit of 16 MiB") ||
		strings.Contains(text, "--max-input-bytes") {
		t.Errorf("the stored error does not name the limit")
	}
	assertReadable(t, text, 512, "hunter2")
}
