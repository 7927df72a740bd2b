package manifest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a diagnostic stops the command.
type Severity uint8

// Severities of diagnostics.
const (
	SevError Severity = iota
	SevWarning
)

// Diagnostic is one problem found in the input, with where it is and which field.
type Diagnostic struct {
	Pos      Pos
	Field    string // dotted path of the field, e.g. components[1].depends
	Msg      string
	Severity Severity
}

// HasFieldError reports whether an error was said of the field.
func (ds Diagnostics) HasFieldError(field string) bool {
	for _, d := range ds {
		if d.Severity == SevError && d.Field == field {
			return true
		}
	}
	return false
}

// String formats the diagnostic as "file:line:col: field: message"; warnings
// carry "warning:" after the position.
func (d Diagnostic) String() string {
	var b strings.Builder
	if p := d.Pos.String(); p != "" {
		b.WriteString(p)
		b.WriteString(": ")
	}
	if d.Severity == SevWarning {
		b.WriteString("warning: ")
	}
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Msg)
	return b.String()
}

// Diagnostics accumulates problems so that all of them are reported together.
type Diagnostics []Diagnostic

// Errorf adds an error.
func (ds *Diagnostics) Errorf(pos Pos, field, format string, args ...any) {
	*ds = append(*ds, Diagnostic{Pos: pos, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Warnf adds a warning.
func (ds *Diagnostics) Warnf(pos Pos, field, format string, args ...any) {
	*ds = append(*ds, Diagnostic{Pos: pos, Field: field, Msg: fmt.Sprintf(format, args...), Severity: SevWarning})
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SevError {
			return true
		}
	}
	return false
}

// Errors returns only the errors.
func (ds Diagnostics) Errors() Diagnostics { return ds.filter(SevError) }

// Warnings returns only the warnings.
func (ds Diagnostics) Warnings() Diagnostics { return ds.filter(SevWarning) }

func (ds Diagnostics) filter(s Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// Sorted returns the diagnostics ordered for reading: files in the order they
// were first mentioned, positions top to bottom within a file; one said
// twice the same (a component manifest two entries of the stack share, whose
// steps are checked for each) once.
func (ds Diagnostics) Sorted() Diagnostics {
	order := map[string]int{}
	seen := make(map[Diagnostic]bool, len(ds))
	out := make(Diagnostics, 0, len(ds))
	for _, d := range ds {
		if _, ok := order[d.Pos.File]; !ok {
			order[d.Pos.File] = len(order)
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.File != b.File {
			return order[a.File] < order[b.File]
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return out
}

// Err returns the errors as one error (nil when there are none).
func (ds Diagnostics) Err() error {
	errs := ds.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Diags: errs}
}

// InvalidError is the error of invalid input: it carries every diagnostic found.
// Commands exit with code 2 when they meet it.
type InvalidError struct {
	Diags Diagnostics
}

func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Diags))
	for i, d := range e.Diags {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// IsInvalid reports whether err is (or wraps) invalid input.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}

// hasError reports an error already said of field (a value the decoder could
// not read is not checked again).
func (ds Diagnostics) hasError(field string) bool {
	for _, d := range ds {
		if d.Severity == SevError && d.Field == field {
			return true
		}
	}
	return false
}
