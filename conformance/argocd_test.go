package conformance

import (
	"fmt"
	"testing"

	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkArgoCD parses a generate output the way Argo CD does: the CMP server
// splits stdout with kube.SplitYAMLToString, the repo server turns each piece
// into an Unstructured with kube.SplitYAML. Both accept YAML and JSON streams.
// It also requires as many objects as the stream has documents, so two
// documents glued together (a lost `---`) cannot pass as one.
func checkArgoCD(data []byte, wantDocs int) (objs []*unstructured.Unstructured, problems []string) {
	pieces, err := kube.SplitYAMLToString(data)
	if err != nil {
		return nil, []string{fmt.Sprintf("Argo CD CMP server rejects the stream: %v", err)}
	}
	for i, p := range pieces {
		got, err := kube.SplitYAML([]byte(p))
		if err != nil {
			problems = append(problems, fmt.Sprintf("Argo CD repo server rejects manifest %d: %v", i, err))
			continue
		}
		objs = append(objs, got...)
	}
	if len(objs) != wantDocs {
		problems = append(problems, fmt.Sprintf("Argo CD sees %d objects, the stream has %d documents", len(objs), wantDocs))
	}
	for i, o := range objs {
		if o.GetAPIVersion() == "" || o.GetName() == "" {
			problems = append(problems, fmt.Sprintf("object %d (%s): apiVersion and metadata.name are required to apply it", i, o.GetKind()))
		}
	}
	if len(objs) == 0 {
		problems = append(problems, "no objects")
	}
	return objs, problems
}

// checkArgoCDYAML checks a YAML stream against its own document count.
func checkArgoCDYAML(data []byte) []string {
	docs, err := splitYAMLDocs(data)
	if err != nil {
		return []string{fmt.Sprintf("splitting YAML documents: %v", err)}
	}
	_, problems := checkArgoCD(data, len(docs))
	return problems
}

func TestArgoCDAcceptsStream(t *testing.T) {
	forEachStream(t, func(t *testing.T, s *stream) {
		report(t, checkArgoCDYAML(s.yaml))
		if s.json != nil {
			jdocs, err := splitJSONDocs(s.json)
			if err != nil {
				t.Fatalf("-o json is not a stream of JSON values: %v", err)
			}
			_, problems := checkArgoCD(s.json, len(jdocs))
			report(t, problems)
		}
	})
}
