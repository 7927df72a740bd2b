package steps

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/internal/secret"
)

// A plugin may hand the same writer to its stdout and its stderr copiers:
// concurrent writes must neither race nor lose lines (run with -race).
func TestCaptureWriterConcurrentWrites(t *testing.T) {
	w := newCaptureWriter(io.Discard, secret.NewMasker(), map[string]bool{})
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				fmt.Fprintf(w, "writer %d line %d\n", g, i)
			}
		}(g)
	}
	wg.Wait()
	fmt.Fprint(w, "Outputs:\nresult = done\n")
	w.Flush()
	if got := w.capture.Outputs()["result"]; got != "done" {
		t.Errorf("output after concurrent writes = %q, want done", got)
	}
}

// Past the capture's bound, a secret output line is shown with its value
// hidden in the line, and the masker learns no more values: it would grow
// with whatever the component prints.
func TestCaptureWriterPastTheBound(t *testing.T) {
	var out strings.Builder
	m := secret.NewMasker()
	w := newCaptureWriter(&out, m, map[string]bool{})
	fmt.Fprint(w, "Outputs:\n")
	big := strings.Repeat("v", 60<<10)
	for i := 0; i < 1200; i++ { // 70 MiB of outputs
		fmt.Fprintf(w, "k%d = %s\n", i, big)
	}
	out.Reset()
	fmt.Fprint(w, "db.password = s3cr3t-value\n")
	w.Flush()
	if w.capture.Err() == nil {
		t.Fatal("the capture did not reach its bound")
	}
	if got := out.String(); got != "db.password = *****\n" {
		t.Errorf("shown %q", got)
	}
	if got := m.Text("s3cr3t-value"); got != "s3cr3t-value" {
		t.Errorf("the masker learnt the value past the bound: %q", got)
	}
}
