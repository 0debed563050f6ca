package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// RenderBinary returns the rollouts-render executable named by ROLLOUTS_RENDER,
// or "" when unset (tests of the product then skip).
func RenderBinary() (string, error) {
	p := os.Getenv("ROLLOUTS_RENDER")
	if p == "" {
		return "", nil
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("ROLLOUTS_RENDER: %w", err)
	}
	return p, nil
}

// Render runs `rollouts-render render ARGS...` and returns its stdout and
// stderr (warnings); a non-zero exit is an error carrying stderr.
func Render(bin string, args ...string) (stdout, stderr []byte, err error) {
	return RunRender(bin, append([]string{"render"}, args...)...)
}

// RunRender runs `rollouts-render ARGS...` (any subcommand), as Render does.
func RunRender(bin string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, errb.Bytes(), fmt.Errorf("rollouts-render %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes(), errb.Bytes(), nil
}

// TestdataPath is the path of a RolloutManager file of testdata/e2e/
// (E2E_TESTDATA, or that directory relative to this package).
func TestdataPath(name string) string {
	dir := os.Getenv("E2E_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "testdata", "e2e")
	}
	return filepath.Join(dir, name)
}
