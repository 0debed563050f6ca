package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Controller is rollouts-controller running as a local process the way the
// rendered Deployment would run it in a pod: same args, same literal env,
// POD_NAMESPACE from the Deployment's namespace, the rendered ServiceAccount's
// identity (a TokenRequest token in a kubeconfig), and a working directory
// that plays the image's /home/argo-rollouts: plugin-bin/ and tmp/ (the
// pod's emptyDir volumes) and plugins/, the plugin binaries "in the image".
type Controller struct {
	Dir      string // working directory (the container's /home/argo-rollouts)
	LogPath  string
	Release  Release                // chosen by the container's image
	Template corev1.PodTemplateSpec // the pod template this "pod" was started from
	cmd      *exec.Cmd
	out      *logBuffer
	exited   chan struct{}
	waitErr  error
}

// ControllerOptions say what the pod cannot tell.
type ControllerOptions struct {
	// Dir is the working directory; created empty when it does not exist.
	// Every file of the release's plugin directory is linked into
	// <Dir>/plugins/ ("in the image"), so RolloutManagers can use locations
	// like file://plugins/<file> (relative to the working directory). The
	// controller copies each configured plugin to <Dir>/plugin-bin/<name>
	// when it starts.
	Dir string
	// ExtraArgs go after the rendered args (pflag: the last value wins).
	ExtraArgs []string
	// NoImagePlugins leaves <Dir>/plugins/ empty: the controller's image holds
	// no plugin, and every plugin comes from what the pod delivers.
	NoImagePlugins bool
}

// StartController starts rollouts-controller for the rendered Deployment
// dep (the object as rendered or as read back from the server). The
// container's image picks the release whose controller runs, as a kubelet
// would pull it: an image of no built release is an error.
func (c *Cluster) StartController(ctx context.Context, dep *unstructured.Unstructured, o ControllerOptions) (*Controller, error) {
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(dep.Object, &d); err != nil {
		return nil, fmt.Errorf("deployment: %w", err)
	}
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return nil, fmt.Errorf("deployment %s has no containers", d.Name)
	}
	ctr := d.Spec.Template.Spec.Containers[0]
	rel, err := ReleaseForImage(ctr.Image)
	if err != nil {
		return nil, fmt.Errorf("deployment %s: %w", d.Name, err)
	}
	ns := d.Namespace
	sa := d.Spec.Template.Spec.ServiceAccountName
	if ns == "" || sa == "" {
		return nil, fmt.Errorf("deployment %s: namespace %q / serviceAccountName %q must be set", d.Name, ns, sa)
	}

	for _, d := range []string{"plugins", "plugin-bin", "tmp"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if !o.NoImagePlugins {
		if err := linkPlugins(rel.PluginDir, filepath.Join(o.Dir, "plugins")); err != nil {
			return nil, err
		}
	}
	kubeconfig := filepath.Join(o.Dir, "kubeconfig")
	if err := c.writeServiceAccountKubeconfig(ctx, ns, sa, kubeconfig); err != nil {
		return nil, err
	}

	// The ports bind on every interface (the controller has no bind-address
	// flag); free ones keep parallel runs apart.
	metricsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	healthzPort, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{}, ctr.Args...)
	args = append(args, "--metricsPort", strconv.Itoa(metricsPort), "--healthzPort", strconv.Itoa(healthzPort))
	args = append(args, o.ExtraArgs...)

	cmd := exec.Command(rel.Controller, args...)
	cmd.Dir = o.Dir
	cmd.Env = controllerEnv(ctr.Env, ns, kubeconfig, o.Dir)
	// Own process group: plugins are the controller's children and must end with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logPath := filepath.Join(o.Dir, "controller.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	out := &logBuffer{file: logFile}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", rel.Controller, err)
	}
	ctl := &Controller{Dir: o.Dir, LogPath: logPath, Release: rel, Template: d.Spec.Template,
		cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		ctl.waitErr = cmd.Wait()
		logFile.Close()
		close(ctl.exited)
	}()
	return ctl, nil
}

// writeServiceAccountKubeconfig gives the controller (and, through
// KUBECONFIG, its plugin processes) the rendered ServiceAccount's identity,
// so RBAC is exercised exactly as the rendered roles grant it. The context
// namespace stands in for the pod's mounted namespace file (--namespaced
// watches that namespace).
func (c *Cluster) writeServiceAccountKubeconfig(ctx context.Context, ns, sa, path string) error {
	tr, err := c.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3 * 3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token for serviceaccount %s/%s: %w", ns, sa, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: sa, Namespace: ns}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}

// controllerEnv is this process's environment with the pod's view laid on
// top: literal env values of the container (valueFrom has no meaning here),
// POD_NAMESPACE and KUBECONFIG. HOME is the working directory so nothing
// reads the developer's own ~/.kube; TMPDIR is its tmp/ (the pod's /tmp
// emptyDir), so go-plugin's sockets go away with the test's directory.
func controllerEnv(podEnv []corev1.EnvVar, ns, kubeconfig, home string) []string {
	drop := map[string]bool{"KUBECONFIG": true, "POD_NAMESPACE": true, "HOME": true, "TMPDIR": true}
	for _, e := range podEnv {
		drop[e.Name] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	for _, e := range podEnv {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return append(env, "POD_NAMESPACE="+ns, "KUBECONFIG="+kubeconfig, "HOME="+home, "TMPDIR="+filepath.Join(home, "tmp"))
}

func linkPlugins(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		abs, err := filepath.Abs(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		link := filepath.Join(dst, e.Name())
		_ = os.Remove(link)
		if err := os.Symlink(abs, link); err != nil {
			return err
		}
	}
	return nil
}

// freePort returns a loopback port free now and never handed out before in
// this process: parallel tests must not give two controllers the same port
// between this check and the controller's bind.
func freePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !portsGiven[port] {
			portsGiven[port] = true
			return port, nil
		}
	}
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// WaitForLog waits until the log contains substr; it fails early when the
// process exits.
func (ctl *Controller) WaitForLog(ctx context.Context, substr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(ctl.out.String(), substr) {
			return nil
		}
		select {
		case <-ctl.exited:
			if strings.Contains(ctl.out.String(), substr) {
				return nil
			}
			return fmt.Errorf("controller exited (%v) before logging %q", ctl.waitErr, substr)
		case <-ctx.Done():
			return fmt.Errorf("no %q in controller log after %s", substr, timeout)
		case <-tick.C:
		}
	}
}

// Log returns everything the controller (and its plugins, via go-plugin)
// printed so far.
func (ctl *Controller) Log() string { return ctl.out.String() }

// Exited reports whether the process has ended, and how.
func (ctl *Controller) Exited() (bool, error) {
	select {
	case <-ctl.exited:
		return true, ctl.waitErr
	default:
		return false, nil
	}
}

// WaitExit waits up to timeout for the process to end on its own; it
// reports whether it did and how (the error of exec.Cmd.Wait).
func (ctl *Controller) WaitExit(timeout time.Duration) (bool, error) {
	select {
	case <-ctl.exited:
		return true, ctl.waitErr
	case <-time.After(timeout):
		return false, nil
	}
}

// PluginCommandLines returns the argv of every live process the controller
// started from its plugin-bin/ (its plugins: go-plugin starts them in the
// controller's process group), keyed by the plugin's path relative to
// plugin-bin/, e.g. "step/e2e-test". Linux only (reads /proc).
func (ctl *Controller) PluginCommandLines() (map[string][]string, error) {
	pgid := ctl.cmd.Process.Pid
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	// The controller makes the paths absolute with its own working directory,
	// which may be Dir with its symbolic links resolved.
	prefixes := []string{filepath.Join(ctl.Dir, "plugin-bin") + string(filepath.Separator)}
	if real, err := filepath.EvalSymlinks(ctl.Dir); err == nil {
		prefixes = append(prefixes, filepath.Join(real, "plugin-bin")+string(filepath.Separator))
	}
	out := map[string][]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone, or not ours to read
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 3 || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		argv := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
		for _, prefix := range prefixes {
			if rel, ok := strings.CutPrefix(argv[0], prefix); ok {
				out[rel] = argv[1:]
				break
			}
		}
	}
	return out, nil
}

// DumpStacks makes the controller print every goroutine's stack and exit
// (Go's SIGQUIT behaviour): for a controller that stopped making progress.
func (ctl *Controller) DumpStacks() {
	_ = ctl.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-ctl.exited:
	case <-time.After(10 * time.Second):
	}
}

// Stop ends the controller and its plugin processes (its process group):
// SIGTERM, then SIGKILL after a grace period.
func (ctl *Controller) Stop() {
	pgid := ctl.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-ctl.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-ctl.exited
	}
	// Plugins may outlive a controller that exited on its own.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// logBuffer keeps the combined output in memory for WaitForLog and on disk
// for post-mortems.
type logBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	file *os.File
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if _, err := b.file.Write(p); err != nil && !errors.Is(err, os.ErrClosed) {
		return 0, err
	}
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
