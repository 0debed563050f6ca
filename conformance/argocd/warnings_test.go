package argocd

import (
	"reflect"
	"strings"
	"testing"
)

const warningsAnnotation = "rollouts-render/warnings"

// TestWarningsReachTheApplication: on success the cmp-server keeps the plugin's stderr in
// its own log; the warnings reach Argo CD as the ConfigMap's rollouts-render/warnings
// annotation instead, and nothing the controller runs changes: every other object, the
// ConfigMap's data and the pod template (with its checksum) are those of a render without
// the annotation. The parameter turns it off.
func TestWarningsReachTheApplication(t *testing.T) {
	r := newRepo(t, map[string]string{"rm.yaml": unpinned})
	a := defaultApp("")
	got := received(t, a, mustGenerate(t, r, a))
	annotations, _ := find(t, got, "ConfigMap")["metadata"].(object)["annotations"].(object)
	if annotations[warningsAnnotation] != unpinnedWarning {
		t.Errorf("the ConfigMap's %s is %q, want %q", warningsAnnotation, annotations[warningsAnnotation], unpinnedWarning)
	}
	if !strings.Contains(side.log.String(), "no `sha256`") {
		t.Error("the cmp-server's log does not show the warning it got on stderr")
	}

	without := render(t, r, "--namespace="+appNS)
	if len(without) != len(got) {
		t.Fatalf("%d objects, %d without the annotation", len(got), len(without))
	}
	for i := range got {
		if got[i]["kind"] != "ConfigMap" {
			if !reflect.DeepEqual(got[i], without[i]) {
				t.Errorf("%s differs with the warnings annotation", got[i]["kind"])
			}
			continue
		}
		if !reflect.DeepEqual(got[i]["data"], without[i]["data"]) {
			t.Error("the ConfigMap data differs with the warnings annotation")
		}
	}
	checksum := func(objects []object) any {
		template := find(t, objects, "Deployment")["spec"].(object)["template"].(object)
		return template["metadata"].(object)["annotations"].(object)["checksum/argo-rollouts-config"]
	}
	if checksum(got) != checksum(without) || checksum(got) == nil {
		t.Errorf("the pod template checksum changed: %v, %v", checksum(got), checksum(without))
	}

	off := defaultApp(source([]map[string]any{{"name": "warnings-annotation", "string": "false"}}, nil))
	sameObjects(t, received(t, off, mustGenerate(t, r, off)), without)

	clean := newRepo(t, map[string]string{"rm.yaml": pinned})
	if _, ok := find(t, received(t, a, mustGenerate(t, clean, a)), "ConfigMap")["metadata"].(object)["annotations"]; ok {
		t.Error("a render without warnings has annotations on its ConfigMap")
	}
}
