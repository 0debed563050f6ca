package conformance

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/argoproj/argo-rollouts/utils/plugin/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// inputImage is a plugin's `image` in the input.
type inputImage struct {
	Reference  string `yaml:"reference"`
	Path       string `yaml:"path"`
	PullPolicy string `yaml:"pullPolicy"`
}

// The controller container's working directory, which relative file:
// locations are read from.
const controllerWorkdir = "/home/argo-rollouts"

// checkImageDelivery checks, for every plugin the RolloutManager m gives as
// an image, that the location the controller loads (got) names a file the
// rendered Deployment of namespace ns delivers from that image: inside an
// image volume of that reference mounted read-only by the controller, at the
// image's path; or the target of an init container of that image running
// `cp <path> <target>` into an emptyDir the controller mounts. It then
// writes that location into want, which cannot know the renderer's names.
func checkImageDelivery(s *stream, ns string, m rolloutManager, want, got []types.PluginItem) []string {
	var problems []string
	var images []inputPlugin
	for _, list := range [][]inputPlugin{m.Spec.Plugins.TrafficManagement, m.Spec.Plugins.Metric, m.Spec.Plugins.Step} {
		for _, p := range list {
			if p.Image != nil {
				images = append(images, p)
			}
		}
	}
	if len(images) == 0 {
		return nil
	}
	dep, err := renderedDeployment(s.yaml, ns)
	if err != nil {
		return []string{err.Error()}
	}
	for _, p := range images {
		gi := slices.IndexFunc(got, func(it types.PluginItem) bool { return it.Name == p.Name })
		wi := slices.IndexFunc(want, func(it types.PluginItem) bool { return it.Name == p.Name })
		if gi < 0 || wi < 0 {
			problems = append(problems, fmt.Sprintf("image plugin %s: not loaded by Argo Rollouts", p.Name))
			continue
		}
		location := got[gi].Location
		if problem := deliveredFrom(dep, location, *p.Image); problem != "" {
			problems = append(problems, fmt.Sprintf("image plugin %s (location %s): %s", p.Name, location, problem))
			continue
		}
		want[wi].Location = location
	}
	return problems
}

func renderedDeployment(stream []byte, ns string) (*appsv1.Deployment, error) {
	docs, err := splitYAMLDocs(stream)
	if err != nil {
		return nil, err
	}
	for _, doc := range docs {
		var d appsv1.Deployment
		if err := yaml.Unmarshal(doc, &d); err == nil && d.Kind == "Deployment" && d.Name == "argo-rollouts" && d.Namespace == ns {
			return &d, nil
		}
	}
	return nil, fmt.Errorf("no Deployment argo-rollouts in namespace %s", ns)
}

// deliveredFrom says what is wrong with the claim that the Deployment puts
// image's binary at location ("" when nothing is).
func deliveredFrom(dep *appsv1.Deployment, location string, image inputImage) string {
	u, err := url.ParseRequestURI(location)
	if err != nil || u.Scheme != "file" {
		return "not a file: location"
	}
	// As the controller resolves it (utils/plugin/downloader.go): host + path,
	// relative to the working directory.
	file := u.Host + u.Path
	if !path.IsAbs(file) {
		file = path.Join(controllerWorkdir, file)
	}
	pod := dep.Spec.Template.Spec
	var mount *corev1.VolumeMount
	for i, m := range pod.Containers[0].VolumeMounts {
		if strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/") && (mount == nil || len(m.MountPath) > len(mount.MountPath)) {
			mount = &pod.Containers[0].VolumeMounts[i]
		}
	}
	if mount == nil {
		return fmt.Sprintf("%s is in no volume the controller mounts", file)
	}
	vi := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == mount.Name })
	if vi < 0 {
		return fmt.Sprintf("the controller mounts %s, which the pod does not have", mount.Name)
	}
	v := pod.Volumes[vi]
	switch {
	case v.Image != nil:
		switch {
		case v.Image.Reference != image.Reference:
			return fmt.Sprintf("image volume %s has %s", v.Name, v.Image.Reference)
		case string(v.Image.PullPolicy) != image.PullPolicy:
			return fmt.Sprintf("image volume %s pulls %q, the RolloutManager says %q", v.Name, v.Image.PullPolicy, image.PullPolicy)
		case !mount.ReadOnly:
			return fmt.Sprintf("image volume %s is mounted writable", v.Name)
		case file != strings.TrimSuffix(mount.MountPath, "/")+image.Path:
			return fmt.Sprintf("%s is not %s inside image volume %s (mounted at %s)", file, image.Path, v.Name, mount.MountPath)
		}
		return ""
	case v.EmptyDir != nil:
		for _, init := range pod.InitContainers {
			cmd := slices.Concat(init.Command, init.Args)
			if init.Image != image.Reference || len(cmd) != 3 || cmd[0] != "cp" || cmd[1] != image.Path {
				continue
			}
			for _, im := range init.VolumeMounts {
				rest, ok := strings.CutPrefix(cmd[2], strings.TrimSuffix(im.MountPath, "/")+"/")
				if ok && im.Name == v.Name && strings.TrimSuffix(mount.MountPath, "/")+"/"+rest == file {
					if string(init.ImagePullPolicy) != image.PullPolicy {
						return fmt.Sprintf("init container %s pulls %q, the RolloutManager says %q", init.Name, init.ImagePullPolicy, image.PullPolicy)
					}
					return ""
				}
			}
		}
		return fmt.Sprintf("no init container of %s copies %s to %s in emptyDir %s", image.Reference, image.Path, file, v.Name)
	}
	return fmt.Sprintf("volume %s is neither an image volume nor an emptyDir", v.Name)
}
