package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestBrokenPluginLocationCrashesController (testdata/e2e/broken-location.yaml):
// a plugin location that names no file in the controller's image. The
// renderer cannot see the controller's file system, so it renders; the
// controller then refuses to start: it exits non-zero with "Failed to
// download plugins" naming the missing file, and never starts its
// controllers. The upstream run shows the same failure without
// rollouts-render. (In a cluster: CrashLoopBackOff, Rollouts left alone.)
func TestBrokenPluginLocationCrashesController(t *testing.T) {
	t.Parallel()
	forEachRelease(t, func(t *testing.T, rel Release) {
		for _, src := range sources {
			t.Run(src.name, func(t *testing.T) {
				c, objs := installSource(t, src, rel, "broken-location.yaml")
				dep := Find(objs, "Deployment", "argo-rollouts")
				if dep == nil {
					t.Fatal("no Deployment argo-rollouts in the manifests")
				}
				ctl := launchController(t, c, dep)
				exited, err := ctl.WaitExit(2 * time.Minute)
				if !exited {
					t.Fatal("the controller still runs 2m after starting with a plugin location that names no file")
				}
				if err == nil {
					t.Error("the controller exited with status 0, want a failure")
				}
				log := ctl.Log()
				var fatal string
				for _, line := range strings.Split(log, "\n") {
					if strings.Contains(line, "Failed to download plugins") {
						fatal = line
						break
					}
				}
				for _, want := range []string{
					"level=fatal",
					"failed to copy plugin from ",
					"/plugins/gatewayapi-plugin-linux-amd64 to ",
					"/plugin-bin/argoproj-labs/gatewayAPI",
					"no such file or directory",
				} {
					if !strings.Contains(fatal, want) {
						t.Errorf("the controller's \"Failed to download plugins\" line lacks %q:\n%s", want, fatal)
					}
				}
				if strings.Contains(log, "Started controller") {
					t.Error("the controller started its controllers despite the broken plugin")
				}
				t.Logf("controller exited (%v): %s", err, strings.ReplaceAll(fatal, ctl.Dir, "<dir>"))
			})
		}
	})
}
