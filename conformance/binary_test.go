package conformance

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// repoRoot is the rollouts-render checkout; go test runs in conformance/.
func repoRoot() string {
	if r := os.Getenv("RR_REPO_ROOT"); r != "" {
		return r
	}
	abs, err := filepath.Abs("..")
	if err != nil {
		return ".."
	}
	return abs
}

// binaryPath returns RR_BIN, else the release build, else the debug build.
// No binary is a failure, not a skip: a green run must mean the product was
// checked.
func binaryPath(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("RR_BIN"); b != "" {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("RR_BIN=%s: %v", b, err)
		}
		return b
	}
	for _, p := range []string{"target/release/rollouts-render", "target/debug/rollouts-render"} {
		p = filepath.Join(repoRoot(), p)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("no rollouts-render binary: set RR_BIN or run `cargo build --release` (run.sh does)")
	return ""
}

type runResult struct {
	stdout, stderr []byte
	code           int
}

// runBinary runs `rollouts-render args...` with stdin closed, as Argo CD's CMP
// server does; the environment is inherited so a stray dependency on it shows.
func runBinary(t testing.TB, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaryPath(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := runResult{stdout: out.Bytes(), stderr: errb.Bytes()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		res.code = exitErr.ExitCode()
	default:
		t.Fatalf("rollouts-render %q: %v (stderr: %s)", args, err, errb.Bytes())
	}
	return res
}

// renderOK runs the binary and fails unless it exits 0 with output.
func renderOK(t testing.TB, args ...string) []byte {
	t.Helper()
	r := runBinary(t, args...)
	if r.code != 0 || len(bytes.TrimSpace(r.stdout)) == 0 {
		t.Fatalf("rollouts-render %q: exit %d, %d bytes of stdout, stderr:\n%s", args, r.code, len(r.stdout), r.stderr)
	}
	return r.stdout
}
