package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The argo-rollouts-manager operator, whose CRD ours must accept. Its Go
// module is never part of this module's build list: `go mod download` puts
// it in the module cache (checked against the checksum database) and the
// tests read files from there. Pinned to the newest release tag.
const (
	operatorModule  = "github.com/argoproj-labs/argo-rollouts-manager"
	operatorVersion = "v0.0.9"
	operatorCRDFile = "config/crd/bases/argoproj.io_rolloutmanagers.yaml"
)

// operatorFiles are the files of operatorVersion the tests read, with their
// SHA-256: whatever the source of the module directory, the tests check
// exactly these bytes. Every RolloutManager under config/samples/ and
// examples/ must be in one of them.
var operatorFiles = map[string]string{
	operatorCRDFile: "19ee5016ae93c05aaa393c5118fbb591abb315d815ded1dba266eb0301720a93",
	"config/samples/argoproj.io_v1alpha1_rolloutmanager.yaml": "9f5f9a5a22feea891dbfdf654a0636bd92aa652073616e419212bca26bb8d323",
	"examples/basic_rolloutmanager.yaml":                      "e1174dc161c4c3683437294eb7bdc81d8cfd68c1489dc6e5c77d7efc253f30b5",
	"examples/custom_image_rolloutmanager.yaml":               "175105560418531132d37879ba7ded8583f23ddb18303358a39e626231ad8930",
	"examples/custom_metadata_rolloutmanager.yaml":            "9dbae45b1aa22795093130aa67276987404d536b1342675000f4d9b39322c9b5",
	"examples/custom_resources_rolloutmanager.yaml":           "dec7fafb3cb57bf6c5b7f994262a7a234e80467f4b7337ddc9b3c93214fc3c7f",
	"examples/nodeplacement_rolloutmanager.yaml":              "d51ec8517579bb43d232394da7075ac76eeee4d87f51c82cf8c6daabe4e9f452",
}

// operatorExampleGlobs: where the operator keeps example RolloutManagers.
var operatorExampleGlobs = []string{"config/samples/*.yaml", "examples/*.yaml"}

var (
	operatorOnce   sync.Once
	operatorDir    string
	operatorOrigin string
	operatorErr    error
)

// operatorModuleDir is a directory holding the operator module's files:
//
//  1. $RR_OPERATOR_DIR, when set (a checkout or an unpacked module);
//  2. else the module from `go mod download` (module proxy or cache);
//  3. else, when the download fails, $RR_OPERATOR_FALLBACK_DIR, which run.sh
//     sets where a copy of the same files is available; its use is noted.
//
// In every case the pinned files must have the pinned SHA-256.
func operatorModuleDir(t testing.TB) string {
	t.Helper()
	operatorOnce.Do(func() { operatorDir, operatorOrigin, operatorErr = resolveOperatorModule() })
	if errors.Is(operatorErr, errOperatorUnavailable) {
		// Neither the module proxy nor a reference copy serves the operator here (a CI
		// machine, say): say so loudly rather than fail on missing upstream data.
		runNote(operatorErr.Error())
		t.Skip(operatorErr)
	}
	if operatorErr != nil {
		t.Fatal(operatorErr)
	}
	return operatorDir
}

var errOperatorUnavailable = errors.New("the argo-rollouts-manager operator's files are unavailable; operator CRD checks skipped")

func resolveOperatorModule() (dir, origin string, err error) {
	mod := operatorModule + "@" + operatorVersion
	if d := os.Getenv("RR_OPERATOR_DIR"); d != "" {
		dir, origin = d, "RR_OPERATOR_DIR="+d
	} else if d, derr := downloadModule(mod); derr == nil {
		dir, origin = d, "module "+mod
	} else if fb := os.Getenv("RR_OPERATOR_FALLBACK_DIR"); fb != "" {
		dir, origin = fb, "RR_OPERATOR_FALLBACK_DIR="+fb
		runNote(fmt.Sprintf("%s could not be downloaded (%s); checked run.sh's reference copy of it instead (pinned SHA-256 verified)",
			mod, shortError(derr)))
	} else {
		return "", "", fmt.Errorf("%w (%s: go mod download: %v; set RR_OPERATOR_DIR to a directory holding the module's files, see README.md)", errOperatorUnavailable, mod, shortError(derr))
	}
	if err := verifyOperatorFiles(dir); err != nil {
		return "", "", fmt.Errorf("%s (from %s): %w", mod, origin, err)
	}
	return dir, origin, nil
}

// downloadModule runs `go mod download -json mod` outside any module, so
// that nothing is added to this module's go.mod or go.sum, and returns the
// module's directory in the module cache. env is added to the go command's
// environment (GOTOOLCHAIN for a module that needs a newer Go).
func downloadModule(mod string, env ...string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "rr-operator-module-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "mod", "download", "-json", mod)
	cmd.Dir = tmp
	// GOFLAGS may hold module flags (-mod=…) that only apply inside a module.
	cmd.Env = append(append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GO111MODULE=on"), env...)
	out, runErr := cmd.Output()
	var res struct{ Dir, Error string }
	if err := json.Unmarshal(out, &res); err != nil {
		return "", fmt.Errorf("%v; output %q", runErr, out)
	}
	switch {
	case res.Error != "":
		return "", errors.New(res.Error)
	case runErr != nil:
		return "", runErr
	case res.Dir == "":
		return "", errors.New("go mod download gave no directory")
	}
	return res.Dir, nil
}

func verifyOperatorFiles(dir string) error {
	var bad []string
	for _, name := range sortedKeys(operatorFiles) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != operatorFiles[name] {
			bad = append(bad, fmt.Sprintf("%s: sha256 %s, pinned %s", name, got, operatorFiles[name]))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("not the pinned files of %s:\n  %s", operatorVersion, strings.Join(bad, "\n  "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// shortError is the gist of a go command error: its last ": "-separated
// part of the first line ("403 Forbidden", "410 Gone", …).
func shortError(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	if i := strings.LastIndex(line, ": "); i >= 0 {
		return line[i+2:]
	}
	return line
}

// runNote records something a green run did not check as intended; run.sh
// prints these notes ($RR_NOTES) after the tests.
func runNote(msg string) {
	path := os.Getenv("RR_NOTES")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, msg)
}

// operatorCRD is the operator's CRD, decoded strictly and defaulted.
func operatorCRD(t testing.TB) (crd *apiextensionsv1.CustomResourceDefinition, origin string) {
	t.Helper()
	dir := operatorModuleDir(t)
	data, err := os.ReadFile(filepath.Join(dir, operatorCRDFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodeCRD(data)
	if err != nil {
		t.Fatalf("%s %s: %v", operatorVersion, operatorCRDFile, err)
	}
	return c, operatorOrigin
}

// TestCRDAcceptsOperatorFields: our CRD is a drop-in replacement of the
// operator's: the same resource, versions and subresources, and every
// property path of the operator's schema exists in ours with a compatible
// type, so every field an operator user writes is kept, not pruned.
func TestCRDAcceptsOperatorFields(t *testing.T) {
	ours := ourCRD(t)
	up, origin := operatorCRD(t)
	t.Logf("operator CRD %s from %s", operatorVersion, origin)
	// Control: the harness's API server accepts the operator's own CRD.
	t.Run("operator-crd-created", func(t *testing.T) { report(t, createCRD(up)) })
	t.Run("same-resource", func(t *testing.T) { report(t, crdIdentityProblems(up, ours)) })
	for _, uv := range up.Spec.Versions {
		t.Run("schema-"+uv.Name, func(t *testing.T) {
			var ov *apiextensionsv1.CustomResourceDefinitionVersion
			for i := range ours.Spec.Versions {
				if ours.Spec.Versions[i].Name == uv.Name {
					ov = &ours.Spec.Versions[i]
				}
			}
			if ov == nil || ov.Schema == nil || ov.Schema.OpenAPIV3Schema == nil {
				t.Fatalf("our CRD has no schema for version %s", uv.Name)
			}
			if uv.Schema == nil || uv.Schema.OpenAPIV3Schema == nil {
				t.Fatalf("the operator's CRD has no schema for version %s", uv.Name)
			}
			var c schemaComparison
			c.compare("", uv.Schema.OpenAPIV3Schema, ov.Schema.OpenAPIV3Schema)
			report(t, c.problems)
			// The walk must reach the leaves, through properties, items
			// and additionalProperties.
			for _, p := range []string{"spec.plugins.metric[*].sha256", "spec.plugins.trafficManagement[*].location",
				"spec.env[*].valueFrom.secretKeyRef.key", "spec.nodePlacement.tolerations[*].tolerationSeconds",
				"spec.controllerResources.limits{*}", "spec.additionalMetadata.labels{*}", "spec.ha.enabled"} {
				if !c.visited[p] {
					t.Errorf("the walk did not reach %s", p)
				}
			}
			t.Logf("%d upstream schema nodes compared; accepted by x-kubernetes-preserve-unknown-fields: %s", len(c.visited), strings.Join(c.open, ", "))
			t.Logf("value rules only ours has (by design, see README):\n  %s", strings.Join(c.stricter, "\n  "))
		})
	}
}

// crdIdentityProblems: ours must define the same resource as upstream's,
// so that applying it replaces upstream's in place.
func crdIdentityProblems(up, ours *apiextensionsv1.CustomResourceDefinition) []string {
	var p []string
	eq := func(what, u, o string) {
		if u != o {
			p = append(p, fmt.Sprintf("%s: %q, operator %q", what, o, u))
		}
	}
	eq("metadata.name", up.Name, ours.Name)
	eq("spec.group", up.Spec.Group, ours.Spec.Group)
	eq("spec.scope", string(up.Spec.Scope), string(ours.Spec.Scope))
	eq("spec.names.kind", up.Spec.Names.Kind, ours.Spec.Names.Kind)
	eq("spec.names.listKind", up.Spec.Names.ListKind, ours.Spec.Names.ListKind)
	eq("spec.names.plural", up.Spec.Names.Plural, ours.Spec.Names.Plural)
	eq("spec.names.singular", up.Spec.Names.Singular, ours.Spec.Names.Singular)
	for _, s := range up.Spec.Names.ShortNames {
		if !contains(ours.Spec.Names.ShortNames, s) {
			p = append(p, fmt.Sprintf("spec.names.shortNames: no %q", s))
		}
	}
	for _, s := range up.Spec.Names.Categories {
		if !contains(ours.Spec.Names.Categories, s) {
			p = append(p, fmt.Sprintf("spec.names.categories: no %q", s))
		}
	}
	for _, uv := range up.Spec.Versions {
		found := false
		for _, ov := range ours.Spec.Versions {
			if ov.Name != uv.Name {
				continue
			}
			found = true
			if uv.Served && !ov.Served {
				p = append(p, fmt.Sprintf("version %s: not served", uv.Name))
			}
			if uv.Storage != ov.Storage {
				p = append(p, fmt.Sprintf("version %s: storage %v, operator %v", uv.Name, ov.Storage, uv.Storage))
			}
			upSub, ourSub := uv.Subresources, ov.Subresources
			if upSub != nil && upSub.Status != nil && (ourSub == nil || ourSub.Status == nil) {
				p = append(p, fmt.Sprintf("version %s: no status subresource (the operator writes status through it)", uv.Name))
			}
			if upSub != nil && upSub.Scale != nil && (ourSub == nil || ourSub.Scale == nil) {
				p = append(p, fmt.Sprintf("version %s: no scale subresource", uv.Name))
			}
		}
		if !found {
			p = append(p, fmt.Sprintf("version %s: missing", uv.Name))
		}
	}
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// schemaComparison walks an upstream schema and ours side by side.
type schemaComparison struct {
	visited  map[string]bool // upstream schema nodes compared, by path
	open     []string        // upstream paths ours keeps whole (x-kubernetes-preserve-unknown-fields)
	problems []string        // where an object valid upstream would lose a field or be refused for its type
	stricter []string        // value rules (pattern, enum, required, …) only ours has: by design
}

// schemaKind is what a schema node admits, in the terms of structural
// schemas: a type, int-or-string, or anything.
func schemaKind(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.Type != "":
		return s.Type
	case preserves(s):
		return "any"
	}
	return "untyped"
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// kindAccepts: every value of kind up is a value of kind ours.
func kindAccepts(ours, up string) bool {
	switch {
	case ours == up, ours == "any":
		return true
	case ours == "number":
		return up == "integer"
	case ours == "int-or-string":
		return up == "integer" || up == "string"
	}
	return false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (c *schemaComparison) compare(path string, up, ours *apiextensionsv1.JSONSchemaProps) {
	at := path
	if at == "" {
		at = "(root)"
	}
	if c.visited == nil {
		c.visited = map[string]bool{}
	}
	c.visited[at] = true
	upKind, ourKind := schemaKind(up), schemaKind(ours)
	if ourKind == "any" {
		c.open = append(c.open, at)
		return
	}
	if !kindAccepts(ourKind, upKind) {
		c.problems = append(c.problems, fmt.Sprintf("%s: ours is %s, the operator's %s", at, ourKind, upKind))
		return
	}
	if up.Nullable && !ours.Nullable {
		c.problems = append(c.problems, fmt.Sprintf("%s: the operator's accepts null, ours drops it", at))
	}
	if preserves(up) && !preserves(ours) {
		c.problems = append(c.problems, fmt.Sprintf("%s: the operator's keeps unknown fields, ours prunes them", at))
	}
	for _, r := range ours.Required {
		// A presence rule, like a pattern: the field exists in both.
		if !contains(up.Required, r) {
			c.stricter = append(c.stricter, fmt.Sprintf("%s: required %q (operator: optional)", at, r))
		}
	}
	if len(ours.Enum) > 0 {
		if len(up.Enum) == 0 {
			c.stricter = append(c.stricter, fmt.Sprintf("%s: enum %s", at, enumText(ours.Enum)))
		}
		for _, u := range up.Enum {
			if !containsJSON(ours.Enum, u) {
				c.problems = append(c.problems, fmt.Sprintf("%s: the operator's enum has %s, ours does not", at, u.Raw))
			}
		}
	}
	c.constraints(at, up, ours)

	for _, k := range sortedKeys(up.Properties) {
		uc := up.Properties[k]
		child := joinPath(path, k)
		switch oc, ok := ours.Properties[k]; {
		case ok:
			c.compare(child, &uc, &oc)
		case ours.AdditionalProperties != nil && ours.AdditionalProperties.Schema != nil:
			c.compare(child, &uc, ours.AdditionalProperties.Schema)
		case preserves(ours):
			c.open = append(c.open, child)
		default:
			c.problems = append(c.problems, fmt.Sprintf("%s: no such field in ours (the operator's: %s)", child, schemaKind(&uc)))
		}
	}
	if up.Items != nil {
		child := path + "[*]"
		switch {
		case up.Items.Schema == nil:
			c.problems = append(c.problems, child+": the operator's items are not one schema")
		case ours.Items != nil && ours.Items.Schema != nil:
			c.compare(child, up.Items.Schema, ours.Items.Schema)
		default:
			c.problems = append(c.problems, child+": ours has no item schema")
		}
	}
	if up.AdditionalProperties != nil && up.AdditionalProperties.Schema != nil {
		child := path + "{*}"
		switch {
		case ours.AdditionalProperties != nil && ours.AdditionalProperties.Schema != nil:
			c.compare(child, up.AdditionalProperties.Schema, ours.AdditionalProperties.Schema)
		case preserves(ours):
			c.open = append(c.open, child)
		default:
			c.problems = append(c.problems, child+": ours has no schema for map values")
		}
	}
}

// constraints notes the value validations of ours that the operator's
// schema does not have (or has with another value).
func (c *schemaComparison) constraints(at string, up, ours *apiextensionsv1.JSONSchemaProps) {
	note := func(what string, o, u any) {
		c.stricter = append(c.stricter, fmt.Sprintf("%s: %s %v (operator: %v)", at, what, o, u))
	}
	if ours.Pattern != "" && ours.Pattern != up.Pattern {
		note("pattern", ours.Pattern, orNone(up.Pattern))
	}
	if ours.Format != "" && ours.Format != up.Format {
		note("format", ours.Format, orNone(up.Format))
	}
	for _, b := range []struct {
		what     string
		ours, up *int64
	}{
		{"maxLength", ours.MaxLength, up.MaxLength}, {"minLength", ours.MinLength, up.MinLength},
		{"maxItems", ours.MaxItems, up.MaxItems}, {"minItems", ours.MinItems, up.MinItems},
		{"maxProperties", ours.MaxProperties, up.MaxProperties}, {"minProperties", ours.MinProperties, up.MinProperties},
	} {
		if b.ours != nil && (b.up == nil || *b.up != *b.ours) {
			note(b.what, *b.ours, ptrText(b.up))
		}
	}
	for _, b := range []struct {
		what     string
		ours, up *float64
	}{{"maximum", ours.Maximum, up.Maximum}, {"minimum", ours.Minimum, up.Minimum}, {"multipleOf", ours.MultipleOf, up.MultipleOf}} {
		if b.ours != nil && (b.up == nil || *b.up != *b.ours) {
			note(b.what, *b.ours, ptrText(b.up))
		}
	}
	if ours.UniqueItems && !up.UniqueItems {
		note("uniqueItems", true, false)
	}
	if lt := ours.XListType; lt != nil && (*lt == "set" || *lt == "map") && (up.XListType == nil || *up.XListType == "atomic") {
		note("x-kubernetes-list-type", *lt, "atomic")
	}
	if len(ours.XValidations) > len(up.XValidations) {
		note("x-kubernetes-validations rules", len(ours.XValidations), len(up.XValidations))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func ptrText[T any](p *T) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

func containsJSON(list []apiextensionsv1.JSON, v apiextensionsv1.JSON) bool {
	for _, x := range list {
		if string(x.Raw) == string(v.Raw) {
			return true
		}
	}
	return false
}

func enumText(list []apiextensionsv1.JSON) string {
	parts := make([]string, len(list))
	for i, v := range list {
		parts[i] = string(v.Raw)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
