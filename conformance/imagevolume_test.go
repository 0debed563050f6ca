package conformance

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/apps"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
)

// storedDeployment runs the Deployment of a rendered stream through the API
// server's create path (as apiServerCreate does) and returns what would be
// stored, with the validation errors.
func storedDeployment(t *testing.T, stream []byte) (*apps.Deployment, []error) {
	t.Helper()
	docs, err := splitYAMLDocs(stream)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		obj, gvk, err := strictYAML.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("strict decoding: %v", err)
		}
		if gvk.Kind != "Deployment" {
			continue
		}
		legacyscheme.Scheme.Default(obj)
		internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: "apps", Version: runtime.APIVersionInternal})
		if err != nil {
			t.Fatal(err)
		}
		d := internal.(*apps.Deployment)
		rest.FillObjectMetaSystemFields(d)
		ctx := genericapirequest.WithNamespace(context.Background(), d.Namespace)
		if err := rest.BeforeCreate(deployment.Strategy, ctx, d); err != nil {
			return d, []error{err}
		}
		return d, nil
	}
	t.Fatal("no Deployment in the stream")
	return nil, nil
}

// TestImageVolumeDeliveryOnTheCreatePath: the Deployment of
// testdata/plugin-images-volume.yaml passes the 1.34 API server's create path
// with its image volumes and their read-only mounts kept when the ImageVolume
// feature gate is on (beta and off by default in 1.33 and 1.34, on by
// default from 1.35); with the gate off the same request succeeds and drops
// them, which is why rollouts-render warns about volume delivery for 1.33
// and 1.34. The init-container form needs no gate.
func TestImageVolumeDeliveryOnTheCreatePath(t *testing.T) {
	render := func(t *testing.T, mode string) []byte {
		res := runBinary(t, "render", "--plugin-image-delivery", mode, filepath.Join(testdataDir(), "plugin-images-volume.yaml"))
		if res.code != 0 {
			t.Fatalf("render: exit %d: %s", res.code, res.stderr)
		}
		return res.stdout
	}
	imageVolumes := func(d *apps.Deployment) (volumes, readOnlyMounts int) {
		names := map[string]bool{}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Image != nil && v.Image.Reference != "" {
				names[v.Name] = true
				volumes++
			}
		}
		for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
			if names[m.Name] && m.ReadOnly {
				readOnlyMounts++
			}
		}
		return volumes, readOnlyMounts
	}
	volume := render(t, "volume")

	t.Run("volume, gate on", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ImageVolume, true)
		d, errs := storedDeployment(t, volume)
		report(t, errorStrings(errs))
		if v, m := imageVolumes(d); v != 3 || m != 3 {
			t.Errorf("stored: %d image volumes, %d read-only mounts of them; want 3 and 3", v, m)
		}
	})
	t.Run("volume, gate off (1.34 default)", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ImageVolume, false)
		d, errs := storedDeployment(t, volume)
		report(t, errorStrings(errs))
		if v, m := imageVolumes(d); v != 0 || m != 0 {
			t.Errorf("stored: %d image volumes, %d mounts; the 1.34 API server drops them with the gate off", v, m)
		}
		if n := len(d.Spec.Template.Spec.Containers[0].VolumeMounts); n != 2 {
			t.Errorf("%d mounts stored, want the 2 emptyDirs", n)
		}
	})
	t.Run("init-container, gate off", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ImageVolume, false)
		d, errs := storedDeployment(t, render(t, "init-container"))
		report(t, errorStrings(errs))
		pod := d.Spec.Template.Spec
		if len(pod.InitContainers) != 3 || len(pod.Volumes) != 5 || len(pod.Containers[0].VolumeMounts) != 5 {
			t.Errorf("stored: %d init containers, %d volumes, %d mounts; want 3, 5, 5", len(pod.InitContainers), len(pod.Volumes), len(pod.Containers[0].VolumeMounts))
		}
	})
}

func errorStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
