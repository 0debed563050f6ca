package argocd

import (
	"testing"
)

// The objects Argo CD receives are `rollouts-render render` of the same directory with the
// same options: the repo-server's env and parameters mean what the flags mean.

// TestPlainApplication: no parameters, a RolloutManager and a Rollout beside it.
func TestPlainApplication(t *testing.T) {
	r := newRepo(t, map[string]string{"rm.yaml": pinned, "rollout.yaml": rollout})
	a := defaultApp("")
	got := received(t, a, mustGenerate(t, r, a))
	sameObjects(t, got, render(t, r, "--namespace="+appNS))
	if len(got) != 12 || got[11]["kind"] != "Rollout" {
		t.Errorf("want the 11 objects of the installation and the Rollout passed through: %s", names(got))
	}
}

// TestArrayParameter: an array parameter with two items is the flag given twice.
func TestArrayParameter(t *testing.T) {
	r := newRepo(t, map[string]string{"rm.yaml": pinned})
	a := defaultApp(source([]map[string]any{{"name": "allow-plugin-location",
		"array": []string{"https://example.com/", "https://github.com/argoproj-labs/"}}}, nil))
	sameObjects(t, received(t, a, mustGenerate(t, r, a)), render(t, r, "--namespace="+appNS,
		"--allow-plugin-location=https://example.com/", "--allow-plugin-location=https://github.com/argoproj-labs/"))
}

// TestEnvEntry: a plugin env entry (ARGOCD_ENV_IMAGE_PULL_POLICY) is the flag.
func TestEnvEntry(t *testing.T) {
	r := newRepo(t, map[string]string{"rm.yaml": pinned})
	a := defaultApp(source(nil, map[string]string{"IMAGE_PULL_POLICY": "Never"}))
	sameObjects(t, received(t, a, mustGenerate(t, r, a)), render(t, r, "--namespace="+appNS, "--image-pull-policy=Never"))
}

// TestParameterBeatsEnvEntry: given both ways, the parameter wins.
func TestParameterBeatsEnvEntry(t *testing.T) {
	r := newRepo(t, map[string]string{"rm.yaml": pinned})
	a := defaultApp(source([]map[string]any{{"name": "image-pull-policy", "string": "Always"}},
		map[string]string{"IMAGE_PULL_POLICY": "Never"}))
	sameObjects(t, received(t, a, mustGenerate(t, r, a)), render(t, r, "--namespace="+appNS, "--image-pull-policy=Always"))
}

// TestKubeAPIVersions: the destination cluster's API versions (KUBE_API_VERSIONS, as the
// controller lists them, with group/version/Kind entries) decide the ServiceMonitor.
func TestKubeAPIVersions(t *testing.T) {
	r := newRepo(t, map[string]string{"rm.yaml": pinned})
	a := defaultApp("")
	a.apiVersions = append(a.apiVersions, "monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor")
	with := received(t, a, mustGenerate(t, r, a))
	sameObjects(t, with, render(t, r, "--namespace="+appNS, "--api-versions=monitoring.coreos.com/v1"))
	find(t, with, "ServiceMonitor")

	a = defaultApp("")
	without := received(t, a, mustGenerate(t, r, a))
	sameObjects(t, without, render(t, r, "--namespace="+appNS))
	for _, o := range without {
		if o["kind"] == "ServiceMonitor" {
			t.Error("a ServiceMonitor for a cluster without monitoring.coreos.com/v1")
		}
	}
}

// TestKubeVersion: no option depends on the cluster's Kubernetes version (KUBE_VERSION)
// today, so two versions far apart give the same objects.
func TestKubeVersion(t *testing.T) {
	r := newRepo(t, map[string]string{"rm.yaml": pinned})
	want := render(t, r, "--namespace="+appNS)
	for _, version := range []string{"v1.29.0", "v1.36.1"} {
		a := defaultApp("")
		a.kubeVersion = version
		sameObjects(t, received(t, a, mustGenerate(t, r, a)), want)
	}
}
