package argocd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

// image is the sidecar image as scripts/image.sh leaves it: its file system and config.
type image struct {
	rootfs string
	config struct {
		User       string   `json:"User"`
		WorkingDir string   `json:"WorkingDir"`
		Entrypoint []string `json:"Entrypoint"`
		Cmd        []string `json:"Cmd"`
		Env        []string `json:"Env"`
	}
	// pluginYAML is the image's plugin.yaml, at the path the cmp-server reads by default.
	pluginYAML []byte
	// binary is, on this machine, the file plugin.yaml's generate command names in the image.
	binary string
}

// The paths the sidecar sees, as deploy/ mounts them and Argo CD's defaults expect them.
const (
	configPath  = "/home/argocd/cmp-server/config/plugin.yaml"
	socketDir   = "/home/argocd/cmp-server/plugins"
	varFilesDir = "/var/run/argocd"
	serverPath  = varFilesDir + "/argocd-cmp-server"
)

func loadImage(dir string) (*image, error) {
	img := &image{rootfs: filepath.Join(dir, "rootfs")}
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	var config struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(raw, &config); err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	if err := json.Unmarshal(config.Config, &img.config); err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	if img.pluginYAML, err = os.ReadFile(filepath.Join(img.rootfs, configPath)); err != nil {
		return nil, fmt.Errorf("the image has no plugin.yaml where the cmp-server looks: %w", err)
	}
	var plugin struct {
		Spec struct {
			Generate struct {
				Command []string `json:"command"`
			} `json:"generate"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(img.pluginYAML, &plugin); err != nil || len(plugin.Spec.Generate.Command) == 0 {
		return nil, fmt.Errorf("the image's plugin.yaml has no generate command (%v)", err)
	}
	img.binary = filepath.Join(img.rootfs, plugin.Spec.Generate.Command[0])
	return img, nil
}

// sidecar is argocd-cmp-server running as the sidecar container would: chrooted into a copy
// of the image's file system, as the image's user, with deploy/'s volumes mounted (the
// shared var-files with the server binary, the shared plugins socket directory, its own
// /tmp), in a private mount namespace, and with a container's environment.
type sidecar struct {
	root, plugins, tmp string
	cmd                *exec.Cmd
	log                *syncBuffer
	done               chan struct{}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startSidecar starts a sidecar of img; pluginYAML, when not nil, replaces the image's
// plugin.yaml in this sidecar's copy (for planted defects).
func startSidecar(img *image, server string, pluginYAML []byte) (*sidecar, error) {
	base, err := os.MkdirTemp("", "argocd-sidecar-")
	if err != nil {
		return nil, err
	}
	s := &sidecar{
		root:    filepath.Join(base, "root"),
		plugins: filepath.Join(base, "plugins"),
		tmp:     filepath.Join(base, "tmp"),
		log:     &syncBuffer{},
		done:    make(chan struct{}),
	}
	varFiles := filepath.Join(base, "var-files")
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return nil, err
	}
	if out, err := exec.Command("cp", "-a", img.rootfs+"/.", s.root).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copying the image: %v: %s", err, out)
	}
	if pluginYAML != nil {
		if err := os.WriteFile(filepath.Join(s.root, configPath), pluginYAML, 0o644); err != nil {
			return nil, err
		}
	}
	// emptyDir volumes are world-writable; mount points exist as the kubelet makes them.
	for _, dir := range []string{s.plugins, s.tmp, varFiles} {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, err
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			return nil, err
		}
	}
	for _, dir := range []string{socketDir, varFilesDir, "/tmp", "/dev", "/proc"} {
		if err := os.MkdirAll(filepath.Join(s.root, dir), 0o755); err != nil {
			return nil, err
		}
	}
	if out, err := exec.Command("cp", server, filepath.Join(varFiles, "argocd-cmp-server")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copying the cmp-server: %v: %s", err, out)
	}

	user := img.config.User
	if user == "" {
		return nil, errors.New("the image sets no user")
	}
	group := user
	if i := strings.IndexByte(user, ':'); i >= 0 {
		group = user[i+1:]
	}
	// What a container runtime gives a process of this image (no /etc/passwd: HOME is /).
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOSTNAME=argocd-repo-server-0",
		"HOME=/",
	}
	env = append(env, img.config.Env...)
	script := `set -e
mount --bind "$VAR_FILES" "$ROOT` + varFilesDir + `"
mount --bind "$PLUGINS" "$ROOT` + socketDir + `"
mount --bind "$SIDECAR_TMP" "$ROOT/tmp"
mount --rbind /dev "$ROOT/dev"
mount -t proc proc "$ROOT/proc"
cd "$ROOT` + img.config.WorkingDir + `"
exec env -i "$@"`
	args := append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sidecar"}, env...)
	args = append(args, "chroot", "--userspec="+user, "--groups="+group, s.root, serverPath, "--logformat", "text", "--loglevel", "info")
	s.cmd = exec.Command("unshare", args...)
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "ROOT=" + s.root, "VAR_FILES=" + varFiles, "PLUGINS=" + s.plugins, "SIDECAR_TMP=" + s.tmp}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()

	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(s.socket()); err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("argocd-cmp-server exited: %s", s.log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("no socket after 2 minutes: %s", s.log)
		}
	}
}

// socket is the plugin's socket as the repo-server finds it in the shared plugins volume.
func (s *sidecar) socket() string {
	return filepath.Join(s.plugins, "rollouts-render.sock")
}

// stop ends the server. SIGTERM only removes its socket (cmpserver.Shutdown never stops the
// gRPC server; in a pod the kubelet's SIGKILL ends it), so SIGKILL follows.
func (s *sidecar) stop() {
	if s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	_ = os.RemoveAll(filepath.Dir(s.root))
}

// calls counts the gRPC calls of a method the server has finished (from its log).
func (s *sidecar) calls(method string) int {
	return strings.Count(s.log.String(), `msg="finished call" grpc.code=OK grpc.component=server grpc.method=`+method+" ")
}

// children lists the processes the server is running right now (generate or discover).
func (s *sidecar) children() []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, entry := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", entry.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so read after the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == fmt.Sprint(s.cmd.Process.Pid) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", entry.Name(), "cmdline"))
			found = append(found, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
		}
	}
	return found
}
