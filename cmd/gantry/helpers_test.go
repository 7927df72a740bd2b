package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/testenv"
)

// exitCode is the exit code of a command that ran to its end (err is what
// Run or Wait returned); a command that could not run ends the test.
func exitCode(t testing.TB, err error) int {
	t.Helper()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// startCmd starts cmd in the background; its output, stdout and stderr,
// collects in the buffer.
func startCmd(t testing.TB, cmd *exec.Cmd) *testenv.SyncBuffer {
	t.Helper()
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeStack writes a stack's files into a folder of the test's own, as
// writeFiles does, and makes its components' deploy and undeploy scripts
// executable.
func writeStack(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := writeFiles(t, files)
	for name := range files {
		if strings.HasSuffix(name, "/deploy") || strings.HasSuffix(name, "/undeploy") {
			if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}
