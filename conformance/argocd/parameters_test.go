package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"sigs.k8s.io/yaml"
)

// paramCase is one parameter as a user gives it, and the render flags meant to have the same
// effect. Every case's input is one where the parameter changes the outcome (checked).
type paramCase struct {
	name  string
	str   string   // a string parameter's value
	array []string // an array parameter's items
	flags []string
	input string // the RolloutManager the case renders, when not unpinned
}

// paramCases is this harness's own list of the plugin's parameters: plugin.yaml must
// announce exactly these, so a renamed or dropped parameter fails here.
var paramCases = []paramCase{
	{name: "namespace", str: "team-a", flags: []string{"--namespace=team-a"}},
	{name: "strict", str: "true", flags: []string{"--strict"}},
	{name: "require-sha256", str: "true", flags: []string{"--require-sha256"}},
	{name: "allow-plugin-location", array: []string{"https://example.com/", "https://mirror.example.com/"},
		flags: []string{"--allow-plugin-location=https://example.com/", "--allow-plugin-location=https://mirror.example.com/"}},
	{name: "openshift-route-plugin", str: "true", flags: []string{"--openshift-route-plugin"}},
	{name: "rollouts-image", str: "registry.example.com/argo-rollouts:v1.9.1", flags: []string{"--rollouts-image=registry.example.com/argo-rollouts:v1.9.1"}},
	{name: "image-pull-policy", str: "Always", flags: []string{"--image-pull-policy=Always"}},
	// The default (auto) follows KUBE_VERSION; a value that does not is compared.
	{name: "plugin-image-delivery", str: "init-container", flags: []string{"--plugin-image-delivery=init-container"}, input: imagePlugin},
	{name: "aggregate-roles", str: "false", flags: []string{"--aggregate-roles=false"}},
	{name: "warnings-annotation", str: "false", flags: []string{"--warnings-annotation=false"}},
}

// outcome is what a generation ended in: objects, or the error text.
type outcome struct {
	objects []object
	err     string
}

// renderOutcome is render's result for flags: its objects, or (exit status 1) its stderr.
func renderOutcome(t *testing.T, r *repo, flags []string) outcome {
	t.Helper()
	cmd := exec.Command(img.binary, append(append([]string{"render"}, flags...), ".")...)
	cmd.Dir = r.app()
	out, err := cmd.Output()
	if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 1 {
		return outcome{err: strings.TrimSpace(string(exit.Stderr))}
	} else if err != nil {
		t.Fatalf("render %v: %v", flags, err)
	}
	return outcome{objects: readObjects(t, out)}
}

func argoOutcome(t *testing.T, s *sidecar, r *repo, a application) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()
	response, err := r.generate(ctx, s, a)
	if err != nil {
		return outcome{err: err.Error()}
	}
	return outcome{objects: received(t, a, response)}
}

// differs says how got (Argo CD) differs from want (render), or "".
func differs(got, want outcome) string {
	switch {
	case want.err != "" && !strings.Contains(got.err, want.err):
		return fmt.Sprintf("render fails with %q, Argo CD %s", want.err, describe(got))
	case want.err == "" && got.err != "":
		return fmt.Sprintf("render succeeds, Argo CD fails: %s", got.err)
	case want.err == "" && !reflect.DeepEqual(got.objects, want.objects):
		return fmt.Sprintf("the objects differ: Argo CD received %s; render prints %s", digest(got.objects), digest(want.objects))
	}
	return ""
}

func describe(o outcome) string {
	if o.err != "" {
		return "fails with " + o.err
	}
	return "succeeds with " + names(o.objects)
}

// digest shortens an object list for a message.
func digest(objects []object) string {
	b, _ := json.Marshal(objects)
	if len(b) > 600 {
		return names(objects) + fmt.Sprintf(" (%d bytes of JSON)", len(b))
	}
	return string(b)
}

// source is spec.source with these plugin parameters and env entries.
func source(params []map[string]any, env map[string]string) string {
	plugin := map[string]any{}
	if len(params) > 0 {
		plugin["parameters"] = params
	}
	if len(env) > 0 {
		var entries []map[string]string
		for k, v := range env {
			entries = append(entries, map[string]string{"name": k, "value": v})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i]["name"] < entries[j]["name"] })
		plugin["env"] = entries
	}
	text, _ := yaml.Marshal(map[string]any{"plugin": plugin})
	return string(text)
}

func (c paramCase) parameter() map[string]any {
	if c.array != nil {
		return map[string]any{"name": c.name, "array": c.array}
	}
	return map[string]any{"name": c.name, "string": c.str}
}

// envName is the plugin env entry for a parameter: upper case, `_` for `-`.
func envName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

func (c paramCase) envValue() string {
	if c.array != nil {
		return strings.Join(c.array, ",")
	}
	return c.str
}

// announced asks sidecar s what the UI would show.
func announced(s *sidecar, t *testing.T) ([]*apiclient.ParameterAnnouncement, error) {
	ctx, cancel := context.WithTimeout(context.Background(), controllerTimeout)
	defer cancel()
	response, err := grpcAnnouncement(ctx, s, newRepo(t, map[string]string{"rm.yaml": pinned}))
	if err != nil {
		return nil, err
	}
	return response.GetParameterAnnouncements(), nil
}

// defaultFlags are the render flags for what the UI shows as defaults, except for skip:
// generate with nothing sent must mean render with these. Announced names that are none of
// the plugin's parameters are left out (checkAnnouncement reports them).
func defaultFlags(params []*apiclient.ParameterAnnouncement, skip string) []string {
	var flags []string
	for _, p := range params {
		if p.Name == skip || !isParameter(p.Name) {
			continue
		}
		if p.String_ != "" {
			flags = append(flags, fmt.Sprintf("--%s=%s", p.Name, p.String_))
		}
		for _, item := range p.Array {
			flags = append(flags, fmt.Sprintf("--%s=%s", p.Name, item))
		}
	}
	return flags
}

func isParameter(name string) bool {
	for _, c := range paramCases {
		if c.name == name {
			return true
		}
	}
	return false
}

// checkAnnouncement: what the cmp-server announces is plugin.yaml's static parameters, every
// field of them read by Argo CD (none dropped as unknown), and exactly paramCases' names.
func checkAnnouncement(s *sidecar, pluginYAML []byte, t *testing.T) []string {
	params, err := announced(s, t)
	if err != nil {
		return []string{fmt.Sprintf("GetParametersAnnouncement: %v", err)}
	}
	var problems []string
	var plugin struct {
		Spec struct {
			Parameters struct {
				Static []map[string]any `json:"static"`
			} `json:"parameters"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(pluginYAML, &plugin); err != nil {
		return []string{fmt.Sprintf("plugin.yaml: %v", err)}
	}
	var got []map[string]any
	raw, _ := json.Marshal(params)
	_ = json.Unmarshal(raw, &got)
	for _, p := range plugin.Spec.Parameters.Static {
		// Argo CD drops false booleans when it serves them (omitempty).
		if p["required"] == false {
			delete(p, "required")
		}
	}
	if !reflect.DeepEqual(got, plugin.Spec.Parameters.Static) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(plugin.Spec.Parameters.Static)
		problems = append(problems, fmt.Sprintf("announced %s\nplugin.yaml has %s", g, w))
	}
	var names, want []string
	for _, p := range params {
		names = append(names, p.Name)
	}
	for _, c := range paramCases {
		want = append(want, c.name)
	}
	if !reflect.DeepEqual(names, want) {
		problems = append(problems, fmt.Sprintf("announced parameters %v, the plugin's parameters are %v", names, want))
	}
	return problems
}

// checkParameters: every announced parameter, given as a parameter and as an env entry,
// has the effect of its render flags (and its case is one where the flags matter).
func checkParameters(s *sidecar, t *testing.T) []string {
	params, err := announced(s, t)
	if err != nil {
		return []string{fmt.Sprintf("GetParametersAnnouncement: %v", err)}
	}
	var problems []string
	unpinnedRepo := newRepo(t, map[string]string{"rm.yaml": unpinned})
	for _, p := range params {
		var c *paramCase
		for i := range paramCases {
			if paramCases[i].name == p.Name {
				c = &paramCases[i]
			}
		}
		if c == nil {
			problems = append(problems, fmt.Sprintf("announced parameter %q is none of the plugin's", p.Name))
			continue
		}
		r := unpinnedRepo
		if c.input != "" {
			r = newRepo(t, map[string]string{"rm.yaml": c.input})
		}
		flags := append(defaultFlags(params, c.name), c.flags...)
		if c.name != "namespace" {
			flags = append(flags, "--namespace="+appNS)
		}
		want := renderOutcome(t, r, flags)
		// The case must change something against what the parameter's default gives.
		if differs(renderOutcome(t, r, append(defaultFlags(params, ""), "--namespace="+appNS)), want) == "" {
			problems = append(problems, fmt.Sprintf("%s: the test input does not depend on %v", c.name, c.flags))
		}
		for how, src := range map[string]string{
			"parameter": source([]map[string]any{c.parameter()}, nil),
			"env entry": source(nil, map[string]string{envName(c.name): c.envValue()}),
		} {
			if d := differs(argoOutcome(t, s, r, defaultApp(src)), want); d != "" {
				problems = append(problems, fmt.Sprintf("%s as %s: %s", c.name, how, d))
			}
		}
	}
	return problems
}

// checkDefaults: sending every parameter at the default the UI shows changes nothing
// against sending none.
func checkDefaults(s *sidecar, t *testing.T) []string {
	params, err := announced(s, t)
	if err != nil {
		return []string{fmt.Sprintf("GetParametersAnnouncement: %v", err)}
	}
	r := newRepo(t, map[string]string{"rm.yaml": unpinned})
	none := argoOutcome(t, s, r, defaultApp("plugin: {}\n"))
	var problems []string
	for _, p := range params {
		var value map[string]any
		switch {
		case p.String_ != "":
			value = map[string]any{"name": p.Name, "string": p.String_}
		case len(p.Array) > 0:
			value = map[string]any{"name": p.Name, "array": p.Array}
		default:
			continue
		}
		sent := argoOutcome(t, s, r, defaultApp(source([]map[string]any{value}, nil)))
		if d := differs(sent, none); d != "" {
			problems = append(problems, fmt.Sprintf("%s sent at its announced default %v: %s", p.Name, value, d))
		}
	}
	return problems
}

// TestAnnouncedParametersAreThoseOfPluginYAML: the UI's parameter list is plugin.yaml's,
// as Argo CD reads it, and names exactly the plugin's parameters.
func TestAnnouncedParametersAreThoseOfPluginYAML(t *testing.T) {
	report(t, checkAnnouncement(side, img.pluginYAML, t))
}

// TestUIDefaultsAreWhatGenerateDoes: a parameter left at the default the UI shows means the
// same as not sending it.
func TestUIDefaultsAreWhatGenerateDoes(t *testing.T) {
	report(t, checkDefaults(side, t))
}

// TestEveryParameterHasTheEffectOfItsFlag: each parameter, as a parameter and as an env
// entry, gives what render gives with its flag (objects, or the same error).
func TestEveryParameterHasTheEffectOfItsFlag(t *testing.T) {
	report(t, checkParameters(side, t))
}
