package e2e

import gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

// HTTPRouteGVR is the resource the Gateway API traffic scenarios read. The
// Gateway API CRDs installed in the cluster come from the same module
// version (run.sh reads config/crd/standard from it), so this import is
// also what pins that version in go.mod and go.sum.
var HTTPRouteGVR = gatewayv1.SchemeGroupVersion.WithResource("httproutes")
