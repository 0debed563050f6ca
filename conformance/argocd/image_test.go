package argocd

import (
	"bytes"
	"debug/elf"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestImage: the sidecar image holds what the README and deploy/ promise and nothing else:
// the static binary at the path plugin.yaml names, the repository's plugin.yaml where the
// cmp-server reads it by default, user 999:999, working directory /home/argocd, the binary
// as entrypoint and `fn` (the KRM function) as its default command; the entrypoint runs with nothing else in the file system; and the sidecar
// of these tests really runs as UID 999.
func TestImage(t *testing.T) {
	c := img.config
	if c.User != "999:999" || c.WorkingDir != "/home/argocd" || !reflect.DeepEqual(c.Entrypoint, []string{"/usr/local/bin/rollouts-render"}) ||
		!reflect.DeepEqual(c.Cmd, []string{"fn"}) {
		t.Errorf("image config: user %q, workdir %q, entrypoint %v, cmd %v", c.User, c.WorkingDir, c.Entrypoint, c.Cmd)
	}

	var files []string
	err := filepath.WalkDir(img.rootfs, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(img.rootfs, path)
		files = append(files, "/"+rel+" "+info.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{configPath + " -rw-r--r--", "/usr/local/bin/rollouts-render -rwxr-xr-x"}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("the image holds %v, want %v", files, want)
	}
	if img.binary != filepath.Join(img.rootfs, "/usr/local/bin/rollouts-render") {
		t.Errorf("plugin.yaml runs %s", img.binary)
	}

	repoPlugin, err := os.ReadFile(filepath.Join(os.Getenv("RR_REPO_ROOT"), "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(repoPlugin, img.pluginYAML) {
		t.Error("the image's plugin.yaml is not the repository's")
	}

	binary, err := elf.Open(img.binary)
	if err != nil {
		t.Fatal(err)
	}
	defer binary.Close()
	for _, p := range binary.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary needs a dynamic loader: it would not start in an image without a base")
		}
	}
	out, err := exec.Command("chroot", img.rootfs, c.Entrypoint[0], "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "rollouts-render ") {
		t.Errorf("the entrypoint in the image's own file system: %v: %s", err, out)
	}

	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(side.cmd.Process.Pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "Uid:") || strings.HasPrefix(line, "Gid:") {
			if fields := strings.Fields(line); len(fields) != 5 || fields[1] != "999" || fields[2] != "999" {
				t.Errorf("the cmp-server runs with %s", line)
			}
		}
	}
}
