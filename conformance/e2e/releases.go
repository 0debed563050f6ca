package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Release is one Argo Rollouts release the harness can run: the controller and
// upstream's test plugins built from its Go module (../tools/build.sh), and
// that module's directory in the module cache, which holds its CRDs and
// install manifests (read there, never copied).
type Release struct {
	Version    string // the tag, e.g. "v1.9.1"
	ModuleDir  string
	Controller string // rollouts-controller built from the module
	PluginDir  string // upstream's test plugins built from the module, and the stand-in
}

// DefaultVersion is the controller version rollouts-render renders when a
// RolloutManager sets none (the operator's default).
const DefaultVersion = "v1.9.1"

// Image is the controller image of this release, as rendered for a
// RolloutManager with `spec.version: <Version>`.
func (r Release) Image() string { return "quay.io/argoproj/argo-rollouts:" + r.Version }

// CRDDir is upstream's manifests/crds of the release: what the README's
// `kubectl apply --server-side -k` and the Argo CD Application install.
func (r Release) CRDDir() string { return filepath.Join(r.ModuleDir, "manifests", "crds") }

// Manifest is a file of the release's manifests/ (install.yaml, namespace-install.yaml).
func (r Release) Manifest(name string) string { return filepath.Join(r.ModuleDir, "manifests", name) }

// Releases reads the releases run.sh prepared: E2E_ROLLOUTS_MODULES lists the
// module directories (PATH-style, each ending in @<version> as in the module
// cache), and E2E_BIN/<version>/ holds what build.sh built from each.
func Releases() ([]Release, error) {
	mods, bin := os.Getenv("E2E_ROLLOUTS_MODULES"), os.Getenv("E2E_BIN")
	if mods == "" || bin == "" {
		return nil, fmt.Errorf("E2E_ROLLOUTS_MODULES and E2E_BIN must be set (conformance/e2e/run.sh sets them)")
	}
	var out []Release
	for _, dir := range filepath.SplitList(mods) {
		_, version, ok := strings.Cut(filepath.Base(dir), "@")
		if !ok {
			return nil, fmt.Errorf("E2E_ROLLOUTS_MODULES: %s is not a module cache directory (<path>@<version>)", dir)
		}
		r := Release{
			Version:    version,
			ModuleDir:  dir,
			Controller: filepath.Join(bin, version, "rollouts-controller"),
			PluginDir:  filepath.Join(bin, version, "plugins"),
		}
		for _, p := range []string{r.CRDDir(), r.Controller, r.PluginDir} {
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("release %s: %w", version, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// ReleaseForImage is the release whose controller a pod with this image would
// run: the image's tag names it. A Deployment whose image no built release
// matches cannot be run here.
func ReleaseForImage(image string) (Release, error) {
	rels, err := Releases()
	if err != nil {
		return Release{}, err
	}
	for _, r := range rels {
		if image == r.Image() {
			return r, nil
		}
	}
	return Release{}, fmt.Errorf("image %s: no Argo Rollouts release built for it (have %v)", image, versions(rels))
}

func versions(rels []Release) []string {
	var v []string
	for _, r := range rels {
		v = append(v, r.Version)
	}
	return v
}
