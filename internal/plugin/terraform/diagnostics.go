package terraform

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/component"
)

// maxDiagnosticLine bounds the line diagnostics keeps. A longer error line
// is not quoted at all: the reason is masked when it is recorded, and a cut
// could leave the start of a secret that the cut end hid from the masker.
const maxDiagnosticLine = 8 << 10

// diagnostics passes terraform's error output on and notes its first
// error ("Error: Invalid multi-line string"), the place it names ("on
// main.tf line 3") and how many errors it printed: what a failed command's
// reason says, where the summary, explain and the report show it — the
// command line and its exit status tell nothing of what went wrong.
type diagnostics struct {
	next io.Writer

	mu      sync.Mutex
	partial []byte // the line being written, cut at maxDiagnosticLine
	cut     bool   // partial was cut: the rest of the line is dropped
	first   string // the first error's summary
	place   string // where it is, when terraform said so right after it
	after   int    // lines looked at since the first error, for its place
	count   int    // errors seen
}

func (d *diagnostics) Write(p []byte) (int, error) {
	d.mu.Lock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if room := maxDiagnosticLine - len(d.partial); !d.cut {
			if len(chunk) > room {
				d.partial, d.cut = append(d.partial, chunk[:room]...), true
			} else {
				d.partial = append(d.partial, chunk...)
			}
		}
		if i < 0 {
			break
		}
		d.line(string(d.partial), d.cut)
		d.partial, d.cut = d.partial[:0], false
		rest = rest[i+1:]
	}
	d.mu.Unlock()
	if d.next == nil {
		return len(p), nil
	}
	return d.next.Write(p)
}

// placeLine is the line after an error's summary that says where it is.
var placeLine = regexp.MustCompile(`^on (.+? line \d+)`)

// line looks at one line of output, cut when it was longer than
// maxDiagnosticLine.
func (d *diagnostics) line(text string, cut bool) {
	// Colour off, terraform may still frame a diagnostic: "│ Error: …".
	text = strings.TrimLeft(text, " \t│╷╵")
	if summary, ok := strings.CutPrefix(text, "Error: "); ok {
		d.count++
		if d.first == "" {
			d.first, d.after = strings.TrimSpace(summary), 0
			if cut {
				d.first = fmt.Sprintf("(a line of over %d KiB: the log has it)", maxDiagnosticLine>>10)
			}
		}
		return
	}
	if d.first == "" || d.place != "" || d.after > 3 {
		return
	}
	d.after++
	if m := placeLine.FindStringSubmatch(text); m != nil {
		d.place = m[1]
	}
}

// explain is err with terraform's first error put first, when it printed
// one: "Error: Invalid multi-line string, on main.tf line 3 (and 1 more
// error; exit status 1)".
func (d *diagnostics) explain(err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil || d.first == "" {
		return err
	}
	return &diagnosedError{summary: d.first, place: d.place, more: d.count - 1, err: err}
}

// diagnosedError is a failed terraform command and the first error it
// printed.
type diagnosedError struct {
	summary, place string
	more           int
	err            error
}

func (e *diagnosedError) Error() string {
	var b strings.Builder
	b.WriteString("Error: " + e.summary)
	if e.place != "" {
		b.WriteString(", on " + e.place)
	}
	b.WriteString(" (")
	switch {
	case e.more == 1:
		b.WriteString("and 1 more error; ")
	case e.more > 1:
		fmt.Fprintf(&b, "and %d more errors; ", e.more)
	}
	var exit *component.ExitError
	if errors.As(e.err, &exit) && exit.Signal == "" {
		fmt.Fprintf(&b, "exit status %d", exit.Code)
	} else {
		b.WriteString(e.err.Error())
	}
	b.WriteString(")")
	return b.String()
}

func (e *diagnosedError) Unwrap() error { return e.err }
