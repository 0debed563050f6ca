package differential

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	// The digest algorithms the kubelet links in for the reference parser
	// (k8s.io/kubernetes pkg/util/parsers imports both).
	_ "crypto/sha256"
	_ "crypto/sha512"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/distribution/reference"
	yamlv2 "gopkg.in/yaml.v2"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"
	sigsyaml "sigs.k8s.io/yaml"
)

// Verdict is what a rule says about one input: the same JSON shape the
// binary's `__verdicts` command prints, so the two compare as values.
type Verdict map[string]any

func accept(ok bool) Verdict { return Verdict{"accept": ok} }

// rules maps each rule name to Go's own answer for it.
var rules = map[string]func(string) Verdict{
	"location":          location,
	"quantity":          quantity,
	"quantity-pattern":  func(s string) Verdict { return accept(crdQuantityPattern.MatchString(s)) },
	"dns1123-label":     func(s string) Verdict { return accept(len(validation.IsDNS1123Label(s)) == 0) },
	"dns1123-subdomain": func(s string) Verdict { return accept(len(validation.IsDNS1123Subdomain(s)) == 0) },
	"qualified-name":    func(s string) Verdict { return accept(len(validation.IsQualifiedName(s)) == 0) },
	// ValidateAnnotations checks each key as IsQualifiedName(strings.ToLower(k)).
	"annotation-key": func(s string) Verdict {
		return accept(len(apivalidation.ValidateAnnotations(map[string]string{s: ""}, nil)) == 0)
	},
	"label-value": func(s string) Verdict { return accept(len(validation.IsValidLabelValue(s)) == 0) },
	// The container env rule of Kubernetes 1.32 and later (RelaxedEnvironmentVariableValidation,
	// on by default from 1.32, locked on from 1.34), and the strict one of earlier releases.
	"env-var-name":        func(s string) Verdict { return accept(len(validation.IsRelaxedEnvVarName(s)) == 0) },
	"env-var-name-strict": func(s string) Verdict { return accept(len(validation.IsEnvVarName(s)) == 0) },
	"namespace":           func(s string) Verdict { return accept(len(apivalidation.ValidateNamespaceName(s, false)) == 0) },
	"config-map-key":      func(s string) Verdict { return accept(len(validation.IsConfigMapKey(s)) == 0) },
	"plugin-name":         func(s string) Verdict { return accept(pluginName.MatchString(s)) },
	"yaml11-plain":        yaml11Plain,
	"yaml-v2-scalar":      yamlV2Scalar,
	"yaml-document":       yamlDocument,
	"image-reference":     imageReference,
	"kube-version":        kubeVersion,
}

// imageReference is what the kubelet makes of an image before it pulls
// (k8s.io/kubernetes v1.34 pkg/util/parsers.ParseImageName, called from
// pkg/kubelet/images): reference.ParseNormalizedNamed, which containerd's CRI
// plugin calls again (ParseDockerRef). Not reference.Parse: the kubelet
// normalizes Docker Hub names and refuses bare image IDs and upper-case
// repositories before the grammar runs.
func imageReference(s string) Verdict {
	named, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		return accept(false)
	}
	v := Verdict{"accept": true, "name": named.Name()}
	if tagged, ok := named.(reference.Tagged); ok {
		v["tag"] = tagged.Tag()
	}
	if digested, ok := named.(reference.Digested); ok {
		v["digest"] = digested.Digest().String()
	}
	return v
}

// kubeVersion is how Argo CD reads the cluster's version before it passes
// KUBE_VERSION to a plugin (reposerver/repository parseKubeVersion:
// version.ParseGeneric), and so how a value given on the command line is read.
func kubeVersion(s string) Verdict {
	v, err := version.ParseGeneric(s)
	if err != nil {
		return accept(false)
	}
	return Verdict{"accept": true, "major": strconv.FormatUint(uint64(v.Major()), 10), "minor": strconv.FormatUint(uint64(v.Minor()), 10)}
}

// The regexp of Argo Rollouts v1.9.1 utils/config/config.go.
var pluginName = regexp.MustCompile(`^([a-zA-Z0-9\-]+)\/{1}([a-zA-Z0-9_\-.]+)$`)

// The controller's working directory in its image: `file:` paths are made
// absolute against it (filepath.Abs in the process started there).
const controllerWorkdir = "/home/argo-rollouts"

// location is what utils/plugin.DownloadPlugins of Argo Rollouts v1.9.1 does
// with a plugin location before the answer depends on the network or the file
// system: url.ParseRequestURI; the scheme switch; for http(s), the request of
// FileDownloaderImpl.Get (http.NewRequest, then http.DefaultClient.Do), sent
// for real over an in-memory connection to a server that answers 200, after
// the dialer's own check of the address (so every check Go makes on the URL,
// the Host header and the port runs, and only name resolution and the remote
// server are left out); for file, the path host + path, made absolute.
func location(s string) Verdict {
	u, err := url.ParseRequestURI(s)
	if err != nil {
		return accept(false)
	}
	switch u.Scheme {
	case "http", "https":
		request, err := http.NewRequest(http.MethodGet, s, nil)
		if err != nil {
			return accept(false)
		}
		response, err := loopbackClient.Do(request)
		if err != nil {
			return accept(false)
		}
		response.Body.Close()
		return Verdict{"accept": true, "scheme": u.Scheme}
	case "file":
		path := u.Host + u.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(controllerWorkdir, path)
		}
		return Verdict{"accept": true, "scheme": "file", "path": filepath.Clean(path)}
	default:
		return accept(false)
	}
}

// loopbackClient sends requests over net.Pipe to a server that answers 200;
// TLS is left out (it depends on the remote certificate, not on the URL).
var loopbackClient = &http.Client{Transport: &http.Transport{
	DialContext:    dialLoopback,
	DialTLSContext: dialLoopback,
}}

func dialLoopback(_ context.Context, network, address string) (net.Conn, error) {
	// What net.Dial checks of an address before it resolves the name.
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if _, err := net.LookupPort(network, port); err != nil {
		return nil, err
	}
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		if _, err := http.ReadRequest(bufio.NewReader(server)); err != nil {
			return
		}
		_, _ = io.WriteString(server, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	}()
	return client, nil
}

// quantity is resource.ParseQuantity and, for an accepted one, the canonical
// form the API server stores (Quantity.String()).
func quantity(s string) Verdict {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return accept(false)
	}
	return Verdict{"accept": true, "canonical": q.String()}
}

// The pattern controller-gen writes for a resource.Quantity in a CRD, as in
// the argo-rollouts-manager operator's RolloutManager CRD (v0.0.9); the
// API server matches it with Go's regexp.
var crdQuantityPattern = regexp.MustCompile(`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`)

// yaml11Plain is what yaml.v2 (and so sigs.k8s.io/yaml, Kubernetes' reader)
// makes of the scalar written plain as a mapping value.
func yaml11Plain(s string) Verdict {
	var doc map[string]any
	if err := yamlv2.Unmarshal([]byte("v: "+s+"\n"), &doc); err != nil || len(doc) != 1 {
		return Verdict{"type": "invalid"}
	}
	v, ok := doc["v"]
	if !ok {
		return Verdict{"type": "invalid"}
	}
	switch v := v.(type) {
	case nil:
		return Verdict{"type": "null"}
	case bool:
		return Verdict{"type": "bool", "value": strconv.FormatBool(v)}
	case int:
		return Verdict{"type": "int", "value": strconv.Itoa(v)}
	case int64:
		return Verdict{"type": "int", "value": strconv.FormatInt(v, 10)}
	case uint64:
		return Verdict{"type": "int", "value": strconv.FormatUint(v, 10)}
	case float64:
		return Verdict{"type": "float", "value": strconv.FormatFloat(v, 'g', -1, 64)}
	case string:
		return Verdict{"type": "string", "value": v}
	default:
		return Verdict{"type": fmt.Sprintf("%T", v), "value": fmt.Sprint(v)}
	}
}

// yamlV2Scalar is the text yaml.v2's Marshal writes for a string (what the
// operator's ConfigMap holds for a plugin's name, location or digest).
func yamlV2Scalar(s string) Verdict {
	out, err := yamlv2.Marshal(s)
	if err != nil {
		return Verdict{"error": err.Error()}
	}
	return Verdict{"text": strings.TrimSuffix(string(out), "\n")}
}

// yamlDocument is what kubectl and Argo CD make of a document:
// sigs.k8s.io/yaml.YAMLToJSON (yaml.v2 underneath, non-strict), as JSON.
func yamlDocument(s string) Verdict {
	data, err := sigsyaml.YAMLToJSON([]byte(s))
	if err != nil {
		return accept(false)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return accept(false)
	}
	return Verdict{"accept": true, "json": v}
}
