package argocd

import "strings"

// Application directories as users keep them in Git.

const promLocation = "https://github.com/argoproj-labs/rollouts-plugin-metric-sample-prometheus/releases/download/v0.0.4/metric-plugin-linux-amd64"

// pinned has no warnings: its plugin carries a sha256.
var pinned = `apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
spec:
  plugins:
    metric:
    - name: argoproj-labs/sample-prometheus
      location: ` + promLocation + `
      sha256: ` + strings.Repeat("ab", 32) + `
`

// unpinned warns: an http(s) plugin without sha256.
var unpinned = `apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
spec:
  plugins:
    metric:
    - name: argoproj-labs/sample-prometheus
      location: ` + promLocation + `
`

// imagePlugin: a step plugin delivered in an image, which plugin-image-delivery decides.
var imagePlugin = `apiVersion: argoproj.io/v1alpha1
kind: RolloutManager
metadata:
  name: argo-rollouts
spec:
  plugins:
    step:
    - name: example/step
      image:
        reference: registry.example.com/step-plugin@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
        path: /step-plugin
`

const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {}
`

// unpinnedWarning is the warning about unpinned as the annotation records it.
const unpinnedWarning = "rm.yaml: warning: spec.plugins.metric[0]: no `sha256`: the controller will run whatever the location serves\n  hint: pin the binary: `sha256: <sha256sum of the binary>`"
