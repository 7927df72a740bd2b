package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// panickingWriter panics when written to.
type panickingWriter struct{}

func (panickingWriter) Write([]byte) (int, error) { panic("the writer broke") }

// TestPanicIsABugNotInvalidInput: a panic anywhere in a command is reported
// as a bug of gantry's with its stack and exit code 1 — Go's own exit code
// for a panic is 2, which would say the input is wrong. A
// standard output that panics when written provokes one in the command.
func TestPanicIsABugNotInvalidInput(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"hub.yaml":               "version: 1\nkind: stack\nmeta: {name: s}\ncomponents:\n  - name: app\n    source: {dir: app}\n",
		"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\nlifecycle: {bare: allow}\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	code := Main(context.Background(), []string{"validate", filepath.Join(dir, "hub.yaml")}, strings.NewReader(""), panickingWriter{}, &stderr)
	if code != ExitFailed {
		t.Errorf("exit code %d, want %d\n%s", code, ExitFailed, stderr.String())
	}
	if !strings.Contains(stderr.String(), "internal error") || !strings.Contains(stderr.String(), "This is a bug in gantry") || !strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("stderr does not report a bug with its stack:\n%s", stderr.String())
	}
}
