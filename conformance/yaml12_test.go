package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	yamlv3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"
)

// readYAML12 reads one YAML document into JSON values (map[string]any,
// []any, string, int64, float64, bool, nil) by the YAML 1.2 core schema:
// the reading rollouts-render documents for its input and that YAML 1.2
// editors apply. gopkg.in/yaml.v3 only parses; plain scalars are typed here,
// because yaml.v3 keeps some YAML 1.1 rules (`0b101`, `1_000`, timestamps).
// Explicit tags, merge keys, duplicate keys, non-string keys and NaN/Inf
// are errors, as none of them has one meaning for every reader.
func readYAML12(doc []byte) (any, error) {
	var n yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &n); err != nil {
		return nil, err
	}
	if n.Kind == 0 {
		return nil, nil
	}
	r := yaml12Reader{budget: 1_000_000}
	return r.node(&n, 0)
}

type yaml12Reader struct{ budget int }

var (
	core12Null  = regexp.MustCompile(`^(|~|null|Null|NULL)$`)
	core12Bool  = regexp.MustCompile(`^(true|True|TRUE|false|False|FALSE)$`)
	core12Int   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	core12Oct   = regexp.MustCompile(`^0o[0-7]+$`)
	core12Hex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	core12Float = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	core12Inf   = regexp.MustCompile(`^([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$`)
)

func (r *yaml12Reader) node(n *yamlv3.Node, depth int) (any, error) {
	r.budget--
	if r.budget < 0 {
		return nil, errors.New("too many nodes (alias expansion)")
	}
	if depth > 200 {
		return nil, errors.New("nested too deeply")
	}
	if n.Style&yamlv3.TaggedStyle != 0 {
		return nil, fmt.Errorf("line %d: explicit tag %s", n.Line, n.Tag)
	}
	switch n.Kind {
	case yamlv3.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return r.node(n.Content[0], depth)
	case yamlv3.AliasNode:
		return r.node(n.Alias, depth+1)
	case yamlv3.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := r.node(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yamlv3.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yamlv3.ScalarNode && k.Style == 0 && k.Value == "<<" {
				return nil, fmt.Errorf("line %d: merge key", k.Line)
			}
			key, err := r.node(k, depth+1)
			if err != nil {
				return nil, err
			}
			s, ok := key.(string)
			if !ok {
				return nil, fmt.Errorf("line %d: key %q is not a string", k.Line, k.Value)
			}
			if _, dup := out[s]; dup {
				return nil, fmt.Errorf("line %d: duplicate key %q", k.Line, s)
			}
			if out[s], err = r.node(v, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case yamlv3.ScalarNode:
		if n.Style != 0 { // quoted, literal or folded: always a string
			return n.Value, nil
		}
		return plainYAML12(n.Value, n.Line)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node kind %v", n.Line, n.Kind)
}

func plainYAML12(s string, line int) (any, error) {
	switch {
	case core12Null.MatchString(s):
		return nil, nil
	case core12Bool.MatchString(s):
		return strings.EqualFold(s, "true"), nil
	case core12Int.MatchString(s):
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		return strconv.ParseFloat(s, 64) // out of int64 range: a JSON number all the same
	case core12Oct.MatchString(s):
		return parseUint64(s[2:], 8, s, line)
	case core12Hex.MatchString(s):
		return parseUint64(s[2:], 16, s, line)
	case core12Float.MatchString(s):
		return strconv.ParseFloat(s, 64)
	case core12Inf.MatchString(s):
		return nil, fmt.Errorf("line %d: %s has no JSON form", line, s)
	}
	return s, nil
}

func parseUint64(digits string, base int, s string, line int) (any, error) {
	u, err := strconv.ParseUint(digits, base, 64)
	if err != nil || u > math.MaxInt64 {
		return nil, fmt.Errorf("line %d: %s is out of range", line, s)
	}
	return int64(u), nil
}

// kubectlReading is the same document as kubectl sends it: sigs.k8s.io/yaml
// (YAML 1.1 typing), as JSON with sorted keys.
func kubectlReading(doc []byte) ([]byte, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// TestReadYAML12 pins the YAML 1.2 core schema typing that the CRD object
// checks rely on.
func TestReadYAML12(t *testing.T) {
	got, err := readYAML12([]byte("a: [x, 1, -2, 1_000, 0b1, 0o17, 0x1F, 1e3, .5, yes, on, n, ~, null, True, '1', \"~\", 2001-12-14]\nb:\nc: |\n  text\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": []any{"x", int64(1), int64(-2), "1_000", "0b1", int64(15), int64(31), 1000.0, 0.5, "yes", "on", "n", nil, nil, true, "1", "~", "2001-12-14"},
		"b": nil,
		"c": "text\n",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
	for _, bad := range []string{"a: 1\na: 2\n", "a: !!str 1\n", "<<: {a: 1}\n", "1: x\n", "a: .nan\n"} {
		if _, err := readYAML12([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
