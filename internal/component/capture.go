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

// Line feeds one line of output.
func (c *Capture) Line(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := strings.TrimSpace(StripANSI(line))
	switch t {
	case "Outputs:":
		c.block, c.started = "outputs", false
		return
	case "Provides:":
		c.block, c.started = "provides", false
		return
	}
	if c.block == "" || c.err != nil {
		return
	}
	if t == "" {
		if c.started {
			c.block = ""
		}
		return
	}
	c.started = true
	if c.block == "provides" {
		c.addProvides(strings.TrimPrefix(t, "- "))
		return
	}
	k, v, ok := strings.Cut(t, "=")
	if !ok {
		return
	}
	k, v = strings.TrimSpace(k), unquote(strings.TrimSpace(v))
	if k == "" {
		return
	}
	if k == "provides" {
		c.addProvides(v)
		return
	}
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
	out := make(map[string]string, len(c.outputs))
	for k, v := range c.outputs {
		out[k] = v
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
		c.err = tooLarge(strings.TrimSpace(k))
	}
}

// InBlock reports whether the next line would be read as an output or a
// capability: such a line is read whole, however long.
func (c *Capture) InBlock() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.block != ""
}

// InOutputsBlock reports whether the next line would be read as an output, so
// that a secret value can be masked before the line is shown.
func (c *Capture) InOutputsBlock() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.block == "outputs"
}
