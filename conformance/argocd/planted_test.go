package argocd

import (
	"bytes"
	"strings"
	"testing"
)

// TestPlantedDefects: the checks above fail on a plugin.yaml with a defect planted into it,
// each served by a sidecar of its own, so a passing run means something.
func TestPlantedDefects(t *testing.T) {
	defects := []struct {
		name        string
		old, new    string
		check       func(*sidecar, []byte, *testing.T) []string
		mentionedBy string
	}{
		{
			name: "a renamed parameter", old: "- name: strict\n", new: "- name: strictness\n",
			check: func(s *sidecar, yaml []byte, t *testing.T) []string {
				return append(checkAnnouncement(s, yaml, t), checkParameters(s, t)...)
			},
			mentionedBy: "strictness",
		},
		{
			name: "a wrong announced default",
			old:  "name: aggregate-roles\n      required: false\n      string: \"true\"",
			new:  "name: aggregate-roles\n      required: false\n      string: \"false\"",
			check: func(s *sidecar, _ []byte, t *testing.T) []string {
				return checkDefaults(s, t)
			},
			mentionedBy: "aggregate-roles",
		},
		{
			name: "no discovery", old: "  discover:\n    find:\n      command:\n      - /usr/local/bin/rollouts-render\n      - discover\n", new: "",
			check: func(s *sidecar, _ []byte, t *testing.T) []string {
				return checkDiscovery(s, t)
			},
			mentionedBy: "a directory with a RolloutManager",
		},
	}
	for _, d := range defects {
		t.Run(d.name, func(t *testing.T) {
			if !bytes.Contains(img.pluginYAML, []byte(d.old)) {
				t.Fatalf("plugin.yaml has no %q to plant the defect in", d.old)
			}
			planted := bytes.Replace(img.pluginYAML, []byte(d.old), []byte(d.new), 1)
			s, err := startSidecar(img, server, planted)
			if err != nil {
				t.Fatal(err)
			}
			defer s.stop()
			problems := d.check(s, planted, t)
			if len(problems) == 0 {
				t.Fatalf("the checks pass with %s", d.name)
			}
			if !strings.Contains(strings.Join(problems, "\n"), d.mentionedBy) {
				t.Errorf("the problems do not mention %q: %v", d.mentionedBy, problems)
			}
			t.Logf("%s: %d problems, first: %s", d.name, len(problems), problems[0])
		})
	}
}
