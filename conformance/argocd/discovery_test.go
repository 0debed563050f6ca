package argocd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// checkDiscovery is the discovery scenario against sidecar s, as a list of problems (the
// planted defects run it against broken plugin.yaml files).
func checkDiscovery(s *sidecar, t *testing.T) []string {
	var problems []string
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()

	// An Application without a plugin section: the repo-server asks every plugin socket.
	with := newRepo(t, map[string]string{"rm.yaml": pinned, "rollout.yaml": rollout})
	response, err := with.generate(ctx, s, defaultApp(""))
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("a directory with a RolloutManager: %v", err))
	case response.SourceType != string(v1alpha1.ApplicationSourceTypePlugin):
		problems = append(problems, fmt.Sprintf("a directory with a RolloutManager was taken as %s, not by the plugin", response.SourceType))
	}

	without := newRepo(t, map[string]string{"rollout.yaml": rollout})
	response, err = without.generate(ctx, s, defaultApp(""))
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("a directory without a RolloutManager: %v", err))
	case response.SourceType != string(v1alpha1.ApplicationSourceTypeDirectory):
		problems = append(problems, fmt.Sprintf("a directory without a RolloutManager was taken as %s, not as plain YAML", response.SourceType))
	case len(response.Manifests) != 1:
		problems = append(problems, fmt.Sprintf("a directory without a RolloutManager gave %d manifests, not its one Rollout", len(response.Manifests)))
	}

	for _, r := range []struct {
		repo *repo
		want bool
	}{{with, true}, {without, false}} {
		supported, enabled, err := grpcMatch(ctx, s, r.repo)
		if err != nil {
			problems = append(problems, fmt.Sprintf("MatchRepository: %v", err))
		} else if supported != r.want || !enabled {
			problems = append(problems, fmt.Sprintf("MatchRepository: supported %v (want %v), discovery enabled %v", supported, r.want, enabled))
		}
	}
	return problems
}

func report(t *testing.T, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}

// TestDiscovery: a directory with a RolloutManager is the plugin's, one without is left to
// Argo CD as plain YAML, through the repo-server's discovery and through MatchRepository.
func TestDiscovery(t *testing.T) {
	report(t, checkDiscovery(side, t))
}

// TestPluginByName: an Application naming the plugin (or with an empty plugin section, or
// none) uses it; the repository is streamed to the sidecar once for discovery with a plugin
// section, twice without one (and once more to generate); a wrong name, and a
// named plugin on a directory without a RolloutManager, are errors of Argo CD's own:
// discovery still runs for a named plugin.
func TestPluginByName(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()
	r := newRepo(t, map[string]string{"rm.yaml": pinned})
	// How often the repo-server streamed the repository for discovery, per source.
	for source, matches := range map[string]int{"plugin:\n  name: rollouts-render\n": 1, "plugin: {}\n": 1, "": 2} {
		before := side.calls("MatchRepository")
		response, err := r.generate(ctx, side, defaultApp(source))
		if err != nil {
			t.Fatalf("%q: %v", source, err)
		}
		if response.SourceType != string(v1alpha1.ApplicationSourceTypePlugin) || len(response.Manifests) != 11 {
			t.Errorf("%q: %s with %d manifests", source, response.SourceType, len(response.Manifests))
		}
		if got := side.calls("MatchRepository") - before; got != matches {
			t.Errorf("%q: %d discovery streams, want %d", source, got, matches)
		}
	}
	_, err := r.generate(ctx, side, defaultApp("plugin:\n  name: rollouts-render-v1\n"))
	if err == nil || !strings.Contains(err.Error(), `could not find cmp-server plugin with name "rollouts-render-v1"`) {
		t.Errorf("a wrong plugin name: %v", err)
	}
	without := newRepo(t, map[string]string{"rollout.yaml": rollout})
	_, err = without.generate(ctx, side, defaultApp("plugin:\n  name: rollouts-render\n"))
	if err == nil || !strings.Contains(err.Error(), `could not find cmp-server plugin with name "rollouts-render" supporting the given repository`) {
		t.Errorf("the plugin named on a directory without a RolloutManager: %v", err)
	}
	t.Logf("named plugin, no RolloutManager: %v", err)
}
