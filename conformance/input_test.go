package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/utils/plugin/types"
)

// managerYAML writes a RolloutManager input. Every scalar is a JSON string,
// which YAML reads as a double-quoted scalar, so the generated input means
// the same to every YAML reader whatever the random values are.
func managerYAML(namespace string, traffic, metric, step []inputPlugin) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: RolloutManager\nmetadata:\n  name: conformance\n  namespace: %s\nspec:\n  plugins:\n", q(namespace))
	for _, l := range []struct {
		key   string
		items []inputPlugin
	}{{"trafficManagement", traffic}, {"metric", metric}, {"step", step}} {
		if len(l.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    %s:\n", l.key)
		for _, p := range l.items {
			fmt.Fprintf(&b, "      - name: %s\n        location: %s\n", q(p.Name), q(p.Location))
			if p.Sha256 != "" {
				fmt.Fprintf(&b, "        sha256: %s\n", q(p.Sha256))
			}
			if len(p.Args) > 0 {
				fmt.Fprintf(&b, "        args: [%s]\n", strings.Join(mapStrings(p.Args, q), ", "))
			}
			if p.Disabled {
				b.WriteString("        disabled: true\n")
			}
			if len(p.HeadersFrom) > 0 {
				b.WriteString("        headersFrom:\n")
				for _, h := range p.HeadersFrom {
					fmt.Fprintf(&b, "          - secretRef:\n              name: %s\n", q(h.SecretRef.Name))
				}
			}
		}
	}
	return b.Bytes()
}

func q(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func mapStrings(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

func headersFrom(secret string) []types.HeadersFrom {
	return []types.HeadersFrom{{SecretRef: types.SecretRef{Name: secret}}}
}

// writeTemp stores an input file for the binary.
func writeTemp(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rolloutmanager.yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
