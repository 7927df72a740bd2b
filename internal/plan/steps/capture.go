package steps

import (
	"io"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/secret"
)

// captureWriter feeds process output to the Outputs: parser line by line and
// passes it on; values of secret outputs are made secret before their line
// is shown. It is safe for concurrent writes.
type captureWriter struct {
	*lines.Writer
	capture    *component.Capture
	out        io.Writer
	masker     *secret.Masker
	secretKeys map[string]bool
}

func newCaptureWriter(out io.Writer, masker *secret.Masker, secretKeys map[string]bool) *captureWriter {
	w := &captureWriter{capture: component.NewCapture(), out: out, masker: masker, secretKeys: secretKeys}
	w.Writer = lines.NewWriter(w.line)
	return w
}

func (w *captureWriter) line(text string) {
	inBlock := w.capture.InOutputsBlock()
	w.capture.Line(text)
	if inBlock {
		if k, v, ok := strings.Cut(component.StripANSI(text), "="); ok {
			k = strings.TrimSpace(k)
			if w.secretKeys[k] || manifest.LooksSecret(k) {
				if w.capture.Err() != nil {
					// Past the capture's bound the masker learns nothing
					// more (it would grow with the output); the value is
					// hidden in the line itself.
					text = k + " = " + secret.Mask
				} else {
					w.masker.Add(strings.Trim(strings.TrimSpace(v), `"'`))
				}
			}
		}
	}
	_, _ = io.WriteString(w.out, text+"\n")
}
