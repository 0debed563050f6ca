package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	yamlv3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"
)

// checkYAMLMatchesJSON: the YAML and the JSON rendering of the same input
// are the same objects when the YAML is read the way Kubernetes, Argo CD and
// Argo Rollouts read it (sigs.k8s.io/yaml, YAML 1.1: an unquoted `yes` would
// become true). JSON has no such ambiguity, so it is the reference.
func checkYAMLMatchesJSON(y, j []byte) []string {
	ydocs, err := splitYAMLDocs(y)
	if err != nil {
		return []string{fmt.Sprintf("YAML: %v", err)}
	}
	jdocs, err := splitJSONDocs(j)
	if err != nil {
		return []string{fmt.Sprintf("-o json: %v", err)}
	}
	if len(ydocs) != len(jdocs) {
		return []string{fmt.Sprintf("%d YAML documents, %d JSON documents", len(ydocs), len(jdocs))}
	}
	var problems []string
	for i := range ydocs {
		var fromYAML, fromJSON any
		if err := yaml.Unmarshal(ydocs[i], &fromYAML); err != nil {
			problems = append(problems, fmt.Sprintf("document %d: YAML 1.1 reader: %v", i, err))
			continue
		}
		if err := json.Unmarshal(jdocs[i], &fromJSON); err != nil {
			problems = append(problems, fmt.Sprintf("document %d: JSON: %v", i, err))
			continue
		}
		if !reflect.DeepEqual(fromYAML, fromJSON) {
			problems = append(problems, fmt.Sprintf("document %d: YAML (read as YAML 1.1) and JSON differ:\n%s", i, diffValues("", fromYAML, fromJSON)))
		}
	}
	return problems
}

// checkYAML12 reads the YAML with a YAML 1.2 reader (gopkg.in/yaml.v3) and
// compares with the YAML 1.1 reading: the output must mean the same to both.
func checkYAML12(y []byte) []string {
	docs, err := splitYAMLDocs(y)
	if err != nil {
		return []string{fmt.Sprintf("YAML: %v", err)}
	}
	var problems []string
	for i, d := range docs {
		var v11, v12 any
		if err := yaml.Unmarshal(d, &v11); err != nil {
			problems = append(problems, fmt.Sprintf("document %d: YAML 1.1 reader: %v", i, err))
			continue
		}
		if err := yamlv3.Unmarshal(d, &v12); err != nil {
			problems = append(problems, fmt.Sprintf("document %d: YAML 1.2 reader: %v", i, err))
			continue
		}
		// Through JSON so both sides have the same Go types.
		b, err := json.Marshal(v12)
		if err != nil {
			problems = append(problems, fmt.Sprintf("document %d: YAML 1.2 value has no JSON form: %v", i, err))
			continue
		}
		v12 = nil
		_ = json.Unmarshal(b, &v12)
		if !reflect.DeepEqual(v11, v12) {
			problems = append(problems, fmt.Sprintf("document %d: YAML 1.1 and YAML 1.2 readings differ:\n%s", i, diffValues("", v11, v12)))
		}
	}
	return problems
}

// diffValues lists the paths where two decoded JSON values differ.
func diffValues(path string, a, b any) string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		out := ""
		for k := range am {
			out += diffValues(path+"."+k, am[k], bm[k])
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				out += diffValues(path+"."+k, nil, bm[k])
			}
		}
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		out := ""
		for i := range al {
			out += diffValues(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i])
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return ""
	}
	return fmt.Sprintf("  %s: %#v vs %#v\n", path, a, b)
}

func TestYAMLAndJSONAgree(t *testing.T) {
	forEachStream(t, func(t *testing.T, s *stream) {
		report(t, checkYAML12(s.yaml))
		if s.json != nil {
			report(t, checkYAMLMatchesJSON(s.yaml, s.json))
		}
	})
}
