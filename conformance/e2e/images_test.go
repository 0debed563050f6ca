package e2e

// Plugins delivered in container images (RolloutManager `image` instead of
// `location`), in both delivery modes. There is no kubelet and no registry:
// fakeImages holds what each image of testdata/e2e/images.yaml contains, and
// podFiles plays the kubelet for the Deployment as the API server stored it,
// mounting each image volume read-only where the controller container mounts
// it, or running each init container's `cp` (the command the Deployment
// gives, with the container's paths mapped onto the volumes' directories).
// Everything after that is real: the controller copies the binaries from
// file:// locations into plugin-bin/ at start-up, with no download, and runs
// all three plugins.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// fakeImages: the file system of each plugin image of images.yaml, as
// path in the image -> binary built by ../tools/build.sh (the default release's PluginDir).
var fakeImages = map[string]map[string]string{
	"registry.e2e.invalid/plugins/trafficrouter-plugin-sample@sha256:" + strings.Repeat("1", 64): {
		"/bin/trafficrouter-plugin-sample": "trafficrouter-plugin-sample",
	},
	"registry.e2e.invalid/plugins/metrics-plugin-sample@sha256:" + strings.Repeat("2", 64): {
		"/plugin/metrics-plugin-sample": "metrics-plugin-sample",
	},
	"registry.e2e.invalid/plugins/step-plugin-e2e@sha256:" + strings.Repeat("3", 64): {
		"/usr/local/bin/step-plugin-e2e": "step-plugin-e2e",
	},
}

// The container's working directory, which the harness's directory stands for.
const podWorkdir = "/home/argo-rollouts"

// newImageVolumeCluster is newCluster (the default release) with the API
// server's ImageVolume feature gate on or off: Kubernetes 1.34 (the version
// built here) has image volumes in beta, off by default, and drops them from a
// pod template otherwise (on by default from 1.35).
func newImageVolumeCluster(t *testing.T, gate bool) *Cluster {
	t.Helper()
	rel := defaultRelease(t)
	var gates []string
	if gate {
		gates = []string{"ImageVolume=true"}
	}
	return newClusterGates(t, []string{rel.CRDDir()}, gates)
}

// defaultRelease is the release a RolloutManager without spec.version runs.
func defaultRelease(t *testing.T) Release {
	t.Helper()
	rel, err := ReleaseForImage(Release{Version: DefaultVersion}.Image())
	if err != nil {
		t.Skipf("e2e environment not set up (%v); run conformance/e2e/run.sh", err)
	}
	return rel
}

// renderImages renders testdata/e2e/images.yaml in a delivery mode; it must
// render without a warning.
func renderImages(t *testing.T, mode string) []*unstructured.Unstructured {
	t.Helper()
	bin, err := RenderBinary()
	if err != nil {
		t.Fatal(err)
	}
	if bin == "" {
		t.Skip("ROLLOUTS_RENDER not set: no rollouts-render binary to test")
	}
	out, stderr, err := Render(bin, "--plugin-image-delivery", mode, TestdataPath("images.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(stderr) > 0 {
		t.Fatalf("rollouts-render warned about images.yaml:\n%s", stderr)
	}
	objs, err := DecodeStream(out)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// storedDeployment reads the controller's Deployment back from the API server.
func storedDeployment(t *testing.T, c *Cluster) (*unstructured.Unstructured, *appsv1.Deployment) {
	t.Helper()
	dep, err := c.Kube.AppsV1().Deployments(ns).Get(context.Background(), "argo-rollouts", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	return u, dep
}

// fakeImageRoot lays out the file system of image ref under dir.
func fakeImageRoot(dir, pluginDir, ref string) (string, error) {
	files, ok := fakeImages[ref]
	if !ok {
		return "", fmt.Errorf("image %s: not an image the harness knows (the kubelet would fail with ErrImagePull)", ref)
	}
	root := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_", "@", "_").Replace(ref))
	for path, binary := range files {
		data, err := os.ReadFile(filepath.Join(pluginDir, binary))
		if err != nil {
			return "", err
		}
		target := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(target, data, 0o755); err != nil {
			return "", err
		}
	}
	return root, nil
}

// hostDir maps a mount path of the controller container (under the working
// directory) to the harness directory standing for it.
func hostDir(workdir, mountPath string) (string, error) {
	rel, ok := strings.CutPrefix(mountPath, podWorkdir+"/")
	if !ok {
		return "", fmt.Errorf("mount path %s is outside %s: the harness can only lay out the working directory", mountPath, podWorkdir)
	}
	return filepath.Join(workdir, rel), nil
}

// podFiles does what the kubelet would do for the pod template's plugin
// volumes, in workdir (the controller's /home/argo-rollouts): each image
// volume gets its image's files at the controller's mount, read-only; each
// emptyDir the controller mounts gets a directory, and every init container
// then runs, in order, as its command says: only `cp SRC DST` is understood
// (the form rollouts-render writes), with SRC read in the container's image
// and DST mapped through the container's volume mounts. It returns what it
// did, for the log.
func podFiles(t *testing.T, workdir, pluginDir string, pod corev1.PodSpec) []string {
	t.Helper()
	images := t.TempDir()
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	// Where each volume is, on this machine.
	where := map[string]string{}
	var did []string
	ctr := pod.Containers[0]
	for _, m := range ctr.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("the controller mounts %s, which the pod does not have", m.Name)
		}
		dir, err := hostDir(workdir, m.MountPath)
		if err != nil {
			if v.Image != nil {
				t.Fatal(err)
			}
			continue // /tmp: the harness's tmp/ (controller.go)
		}
		where[m.Name] = dir
		switch {
		case v.Image != nil:
			if !m.ReadOnly {
				t.Errorf("image volume %s is mounted writable; the kubelet mounts image volumes read-only", m.Name)
			}
			root, err := fakeImageRoot(images, pluginDir, v.Image.Reference)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-a", root+"/.", dir+"/").CombinedOutput(); err != nil {
				t.Fatalf("mount image %s: %v: %s", v.Image.Reference, err, out)
			}
			if out, err := exec.Command("chmod", "-R", "a-w", dir).CombinedOutput(); err != nil {
				t.Fatalf("read-only %s: %v: %s", dir, err, out)
			}
			t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", dir).Run() })
			did = append(did, fmt.Sprintf("image volume %s: %s mounted read-only at %s", m.Name, v.Image.Reference, m.MountPath))
		case v.EmptyDir != nil:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, init := range pod.InitContainers {
		cmd := append(append([]string{}, init.Command...), init.Args...)
		if len(cmd) != 3 || cmd[0] != "cp" {
			t.Fatalf("init container %s runs %q; the harness runs only `cp SRC DST`", init.Name, cmd)
		}
		root, err := fakeImageRoot(images, pluginDir, init.Image)
		if err != nil {
			t.Fatal(err)
		}
		// The container's view: its image at /, its volume mounts on top.
		mapPath := func(p string) (string, error) {
			for _, m := range init.VolumeMounts {
				if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/"); ok {
					dir, ok := where[m.Name]
					if !ok {
						return "", fmt.Errorf("volume %s of init container %s is not mounted by the controller", m.Name, init.Name)
					}
					return filepath.Join(dir, rest), nil
				}
			}
			return filepath.Join(root, p), nil
		}
		src, err := mapPath(cmd[1])
		if err != nil {
			t.Fatal(err)
		}
		dst, err := mapPath(cmd[2])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(dst, workdir) {
			t.Fatalf("init container %s copies to %s, in its own file system: the copy would be lost", init.Name, cmd[2])
		}
		if out, err := exec.Command("cp", src, dst).CombinedOutput(); err != nil {
			t.Fatalf("init container %s: cp %s %s: %v: %s", init.Name, cmd[1], cmd[2], err, out)
		}
		did = append(did, fmt.Sprintf("init container %s (%s): cp %s %s", init.Name, init.Image, cmd[1], cmd[2]))
	}
	return did
}

// TestImagePlugins (testdata/e2e/images.yaml): a traffic router, a metric
// provider and a step plugin delivered in images are installed from the
// image volumes or the init containers' copies (never downloaded) and used
// by one Rollout: the canary Ingress gets weight 30, the step plugin's step
// succeeds, and the analysis through the metric plugin promotes the canary.
func TestImagePlugins(t *testing.T) {
	for _, mode := range []string{"volume", "init-container"} {
		t.Run(mode, func(t *testing.T) {
			objs := renderImages(t, mode)
			c := newImageVolumeCluster(t, mode == "volume")
			if err := c.EnsureNamespace(context.Background(), ns); err != nil {
				t.Fatal(err)
			}
			applyTwice(t, c, objs, ns)
			dep, typed := storedDeployment(t, c)
			pod := typed.Spec.Template.Spec
			var imageVolumes int
			for _, v := range pod.Volumes {
				if v.Image != nil {
					imageVolumes++
				}
			}
			wantVolumes, wantInits := 3, 0
			if mode == "init-container" {
				wantVolumes, wantInits = 0, 3
			}
			if imageVolumes != wantVolumes || len(pod.InitContainers) != wantInits {
				t.Fatalf("stored Deployment: %d image volumes, %d init containers; want %d and %d", imageVolumes, len(pod.InitContainers), wantVolumes, wantInits)
			}

			// Nothing "in the image" but what the pod delivers: no plugins/ links.
			o := ControllerOptions{Dir: t.TempDir(), NoImagePlugins: true}
			for _, line := range podFiles(t, o.Dir, defaultRelease(t).PluginDir, pod) {
				t.Log(line)
			}
			ctl := launchControllerOptions(t, c, dep, o)
			if err := ctl.WaitForLog(context.Background(), "Started controller", 2*time.Minute); err != nil {
				t.Fatal(err)
			}
			log := ctl.Log()
			for _, name := range []string{"argoproj/sample-nginx", "argoproj/sample-prometheus", "step/e2e-test"} {
				if !hasLine(log, "Copied plugin from "+filepath.Join(o.Dir, "plugin-images")+"/", "plugin-bin/"+name) {
					t.Errorf("no line `Copied plugin from %s/plugin-images/… to …/plugin-bin/%s` in the controller log", o.Dir, name)
				}
			}
			if strings.Contains(log, "Downloading plugin") {
				t.Error("the controller downloaded a plugin")
			}

			prom, queries := fakePrometheus(t)
			steps := "      - setWeight: 30\n      - pause: {}\n"
			scenario := strings.Replace(nginxScenario, steps, steps+`      - plugin: {name: step/e2e-test, config: {return: Successful}}
      - analysis:
          templates: [{templateName: threshold}]
`, 1)
			if scenario == nginxScenario {
				t.Fatal("nginxScenario has no `setWeight: 30, pause` steps to extend")
			}
			applyScenario(t, c, scenario+fmt.Sprintf(`
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: threshold, namespace: argo-rollouts}
spec:
  metrics:
  - name: success-rate
    count: 1
    successCondition: result >= 0.9
    provider:
      plugin:
        argoproj/sample-prometheus: {address: %q, query: "0.99"}
`, prom.URL))
			waitHealthy(t, c, ns, "shop", time.Minute)
			setImage(t, c, "shop", "example.invalid/shop:v2")
			waitFor(t, time.Minute, "canary ingress with weight 30", func() (bool, error) {
				ing, err := c.Kube.NetworkingV1().Ingresses(ns).Get(context.Background(), "shop-shop-canary", metav1.GetOptions{})
				if err != nil {
					return false, client404(err)
				}
				return ing.Annotations["nginx.ingress.kubernetes.io/canary-weight"] == "30", nil
			})
			promote(t, c, "shop")
			waitHealthy(t, c, ns, "shop", 2*time.Minute)
			ro, err := getRollout(c, ns, "shop")
			if err != nil {
				t.Fatal(err)
			}
			sts, _, _ := unstructured.NestedSlice(ro.Object, "status", "canary", "stepPluginStatuses")
			if len(sts) != 1 || sts[0].(map[string]any)["phase"] != "Successful" {
				t.Errorf("stepPluginStatuses = %v, want one Successful", sts)
			}
			if got := analysisRunPhase(t, c, "shop"); got != "Successful" {
				t.Errorf("AnalysisRun phase %q, want Successful", got)
			}
			if queries.Load() == 0 {
				t.Error("the metric plugin never queried the fake Prometheus")
			}
		})
	}
}

// TestImageVolumesNeedTheGateOn134 is why rollouts-render warns about image
// volumes on Kubernetes 1.34: with the ImageVolume gate off (the default
// there), the API server accepts the Deployment and silently drops the image
// volumes and their mounts.
func TestImageVolumesNeedTheGateOn134(t *testing.T) {
	objs := renderImages(t, "volume")
	c := newImageVolumeCluster(t, false)
	if err := c.EnsureNamespace(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	applyTwice(t, c, objs, ns)
	_, dep := storedDeployment(t, c)
	pod := dep.Spec.Template.Spec
	for _, v := range pod.Volumes {
		if v.Image != nil {
			t.Errorf("image volume %s kept with the gate off", v.Name)
		}
	}
	mounts := len(pod.Containers[0].VolumeMounts)
	if mounts != 2 {
		t.Errorf("%d volume mounts stored, want the 2 emptyDirs only", mounts)
	}
}
