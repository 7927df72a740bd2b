package component

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// ansiRE matches terminal colour and cursor sequences.
var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07`)

// StripANSI removes terminal escape sequences.
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

// Capture collects the Outputs: and Provides: blocks of a component's output.
// An Outputs: block holds "key = value" lines (quotes and colours stripped)
// and ends at a blank line — blank lines right after the header, as terraform
// prints them, do not end it; several blocks may appear, later values win.
// "provides = a,b" in an Outputs block and the lines of a Provides: block add
// capabilities.
//
// What a capture keeps is bounded (MaxCaptured bytes, MaxProvides
// capabilities): a component that prints without end cannot exhaust
// gantry's memory through it. Past a bound the capture keeps nothing more
// and Err says so; the step fails.
type Capture struct {
	mu       sync.Mutex
	block    string // "", "outputs" or "provides"
	started  bool   // the block has had a line
	outputs  map[string]string
	provides []string
	seen     map[string]bool // provides, for duplicates in constant time
	size     int             // bytes of the outputs' keys and values and of provides
	err      error
	// value is an output's value being read over several lines
	// (capture_multiline.go), valueSize the bytes it holds.
	value     *multiline
	valueSize int
}

// Bounds of what a capture keeps: far above what real components print
// (terraform's outputs of a large module are kilobytes).
const (
	MaxCaptured = 64 << 20
	MaxProvides = 10000
)

// NewCapture returns an empty capture.
func NewCapture() *Capture {
	return &Capture{outputs: map[string]string{}, seen: map[string]bool{}}
}

// Line feeds one line of output. It reports whether the line was read as
// a line of a value over several lines after its first (capture_multiline.go).
func (c *Capture) Line(line string) (ofValue bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	plain := StripANSI(line)
	t := strings.TrimSpace(plain)
	if c.value != nil {
		if c.value.heredoc != "" || (t != "" && t != "Outputs:" && t != "Provides:") {
			c.addToValue(plain)
			return true
		}
		// A blank line or a header ends the block a value that never
		// closed was in: what was read of it is its value.
		c.endValue()
	}
	switch t {
	case "Outputs:":
		c.block, c.started = "outputs", false
		return false
	case "Provides:":
		c.block, c.started = "provides", false
		return false
	}
	if c.block == "" || c.err != nil {
		return false
	}
	if t == "" {
		if c.started {
			c.block = ""
		}
		return false
	}
	c.started = true
	if c.block == "provides" {
		c.addProvides(strings.TrimPrefix(t, "- "))
		return false
	}
	k, v, ok := strings.Cut(t, "=")
	if !ok {
		return false
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if k == "" {
		return false
	}
	if k == "provides" {
		c.addProvides(unquote(v))
		return false
	}
	if m := opens(k, v); m != nil {
		c.value, c.valueSize = m, len(k)+len(v)
		return false
	}
	c.set(k, unquote(v))
	return false
}

// addToValue reads the next line of a multi-line value (c.mu held).
func (c *Capture) addToValue(line string) {
	c.valueSize += len(line) + 1
	if c.size+c.valueSize > MaxCaptured {
		c.err, c.value = tooLarge(c.value.key), nil
		return
	}
	if c.value.add(line) {
		c.endValue()
	}
}

// endValue keeps the multi-line value read (c.mu held).
func (c *Capture) endValue() {
	m := c.value
	c.value = nil
	c.set(m.key, m.value())
}

// set keeps output k, within the bound (c.mu held).
func (c *Capture) set(k, v string) {
	old, had := c.outputs[k]
	grown := c.size + len(v)
	if had {
		grown -= len(old)
	} else {
		grown += len(k)
	}
	if grown > MaxCaptured {
		c.err = tooLarge(k)
		return
	}
	c.outputs[k], c.size = v, grown
}

func (c *Capture) addProvides(s string) {
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if c.seen[p] {
			continue
		}
		if len(c.provides) == MaxProvides || c.size+len(p) > MaxCaptured {
			c.err = fmt.Errorf("more than %d capabilities provided (at %q): gantry keeps no more", MaxProvides, truncate(p))
			return
		}
		c.seen[p] = true
		c.size += len(p)
		c.provides = append(c.provides, p)
	}
}

// truncate shortens a name for a message.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Err reports a bound the output crossed; what came after it was not kept.
func (c *Capture) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func unquote(v string) string {
	if len(v) >= 2 {
		switch {
		case v[0] == '"' && v[len(v)-1] == '"':
			if u, err := strconv.Unquote(v); err == nil {
				return u
			}
			return v[1 : len(v)-1]
		case v[0] == '\'' && v[len(v)-1] == '\'':
			return v[1 : len(v)-1]
		}
	}
	return v
}

// Outputs returns the captured outputs.
func (c *Capture) Outputs() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, len(c.outputs)+1)
	for k, v := range c.outputs {
		out[k] = v
	}
	if c.value != nil {
		// The output ended inside a value: what was read of it.
		out[c.value.key] = c.value.value()
	}
	return out
}

// Provides returns the captured capabilities, in the order first seen.
func (c *Capture) Provides() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.provides...)
}

// tooLarge is the error of outputs past the capture's bound, at output k.
func tooLarge(k string) error {
	return fmt.Errorf("the outputs printed are larger than %d MiB (at output %q): gantry keeps no more", MaxCaptured>>20, truncate(k))
}

// TooLong tells the capture that the line beginning with line is longer
// than it can be given whole: past its bound, the step fails.
func (c *Capture) TooLong(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		k, _, _ := strings.Cut(strings.TrimSpace(StripANSI(line)), "=")
		if c.value != nil {
			k = c.value.key
		}
		c.err = tooLarge(strings.TrimSpace(k))
	}
	c.value = nil
}

// InBlock reports whether the next line would be read as an output or a
// capability: such a line is read whole, however long.
func (c *Capture) InBlock() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.block != ""
}

// InOutputsBlock reports whether the next line would be read as an output, so
// that a secret value can be masked before the line is shown: not a line of
// a multi-line value (InValue).
func (c *Capture) InOutputsBlock() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.block == "outputs" && c.value == nil
}

// InValue reports whether the capture is reading a value over several
// lines (a terraform map, list or heredoc): the next line is the value's.
func (c *Capture) InValue() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.value != nil
}

// Output returns output k as captured so far.
func (c *Capture) Output(k string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.outputs[k]
	return v, ok
}
