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
	// hidden says the line being written in pieces is a secret output's,
	// shown as its name and the mask: its other pieces are not shown.
	hidden bool
	// hiding is the secret output whose value, over several lines (a
	// terraform map), is being read: its lines are not shown, and the
	// masker learns the value once it is whole.
	hiding string
	// plan hides secret outputs' values in terraform's plan.
	plan planOutputs
}

func newCaptureWriter(out io.Writer, masker *secret.Masker, secretKeys map[string]bool) *captureWriter {
	w := &captureWriter{capture: component.NewCapture(), out: out, masker: masker, secretKeys: secretKeys}
	w.Writer = lines.NewPieceWriter(w.line)
	// An output's value is read whole, however long its line (a CA
	// bundle in base64): a value in pieces would be cut, and a secret's
	// later pieces unknown to the masker. Past the capture's bound the
	// line comes in pieces, and the capture fails the step.
	w.Writer.Hold(component.MaxCaptured+lines.MaxLine, w.capture.InBlock)
	return w
}

func (w *captureWriter) line(text string, continued, continues bool) {
	// A piece is passed on as a piece, not ended as a line of its own:
	// the stream it goes to cuts the line again and tells the masker its
	// pieces are one line, so a secret across a cut is still masked.
	end := "\n"
	if continues {
		end = ""
	}
	if continued {
		// The rest of a line longer than the capture keeps: not a line
		// of its own to parse.
		if !w.hidden {
			_, _ = io.WriteString(w.out, text+end)
		}
		return
	}
	w.hidden = false
	text, hide := w.plan.line(text, w.secretKeys, w.masker)
	if hide {
		w.hidden = true
		return
	}
	inBlock := w.capture.InOutputsBlock()
	ofValue, tooLong := false, continues && w.capture.InBlock()
	if tooLong {
		// Longer than a line is held whole: its value cannot be read.
		w.capture.TooLong(text)
	} else {
		ofValue = w.capture.Line(text)
	}
	if w.hiding != "" {
		if !w.capture.InValue() {
			// The secret's value is whole (or ended with its block).
			if v, ok := w.capture.Output(w.hiding); ok && w.capture.Err() == nil {
				w.masker.Add(v)
				w.masker.AddComputed(component.LeafValues(v)...)
			}
			w.hiding = ""
		}
		if ofValue || tooLong {
			w.hidden = true
			return
		}
	}
	if inBlock {
		if k, v, ok := strings.Cut(component.StripANSI(text), "="); ok {
			k = strings.TrimSpace(k)
			if w.secretKeys[k] || manifest.LooksSecret(k) {
				if w.capture.Err() != nil {
					// Past the capture's bound the masker learns nothing
					// more (it would grow with the output); the value is
					// hidden in the line itself, which ends there.
					text, w.hidden, end = k+" = "+secret.Mask, true, "\n"
				} else if w.capture.InValue() {
					// It opens a value of several lines: shown as the
					// mask, its lines not at all.
					text, w.hidden, end, w.hiding = k+" = "+secret.Mask, true, "\n", k
				} else {
					w.masker.Add(strings.Trim(strings.TrimSpace(v), `"'`))
					if len(text) > lines.MaxLine {
						// Shown as the masker would show it, in
						// one line rather than a mask per piece.
						text = k + " = " + secret.Mask
					}
				}
			}
		}
	}
	_, _ = io.WriteString(w.out, text+end)
}
