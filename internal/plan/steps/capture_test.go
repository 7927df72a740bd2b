package steps

import (
	"fmt"
	"io"
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
