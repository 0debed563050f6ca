package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// fieldManager names this harness in managedFields.
const fieldManager = "rollouts-render-e2e"

// DecodeStream splits a manifest stream the way a renderer's consumer would:
// multi-document YAML (duplicate keys rejected, so nothing is silently
// collapsed before the server's strict check) or concatenated JSON objects.
// Empty documents are skipped; a document without apiVersion or kind is an error.
func DecodeStream(data []byte) ([]*unstructured.Unstructured, error) {
	var raws [][]byte
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(t))
		for {
			var m json.RawMessage
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("json document %d: %w", len(raws)+1, err)
			}
			raws = append(raws, m)
		}
	} else {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for i := 1; ; i++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("yaml document %d: %w", i, err)
			}
			j, err := yaml.YAMLToJSONStrict(doc)
			if err != nil {
				return nil, fmt.Errorf("yaml document %d: %w", i, err)
			}
			if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
				continue
			}
			raws = append(raws, j)
		}
	}
	objs := make([]*unstructured.Unstructured, 0, len(raws))
	for i, raw := range raws {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d (%s %s): no apiVersion", i+1, u.GetKind(), u.GetName())
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// ApplyOptions select how Apply sends objects.
type ApplyOptions struct {
	// DefaultNamespace is set on namespaced objects that carry none (in
	// place, so later lookups in the same slice see where they went).
	DefaultNamespace string
	// DryRun asks the server to validate and admit without persisting.
	DryRun bool
}

// Apply server-side-applies objs in order with strict field validation
// (unknown or duplicate fields are errors, including inside CRD schemas).
// It collects every object's error rather than stopping at the first.
func (c *Cluster) Apply(ctx context.Context, objs []*unstructured.Unstructured, o ApplyOptions) error {
	var errs []error
	for _, obj := range objs {
		if err := c.applyOne(ctx, obj, o); err != nil {
			errs = append(errs, fmt.Errorf("%s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

func (c *Cluster) applyOne(ctx context.Context, obj *unstructured.Unstructured, o ApplyOptions) error {
	m, err := c.RESTMapping(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface = c.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(o.DefaultNamespace)
		}
		if obj.GetNamespace() == "" {
			return fmt.Errorf("namespaced object without namespace")
		}
		ri = c.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace())
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: fieldManager, Force: ptr(true), FieldValidation: "Strict"}
	if o.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts)
	return err
}

// Get reads obj (its kind, namespace and name) back from the server.
func (c *Cluster) Get(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	m, err := c.RESTMapping(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	}
	return c.Dynamic.Resource(m.Resource).Get(ctx, obj.GetName(), metav1.GetOptions{})
}

// Find returns the first object of the given kind and name, or nil.
func Find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
