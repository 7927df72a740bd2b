package component

import (
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
type Capture struct {
	mu       sync.Mutex
	block    string // "", "outputs" or "provides"
	started  bool   // the block has had a line
	outputs  map[string]string
	provides []string
}

// NewCapture returns an empty capture.
func NewCapture() *Capture { return &Capture{outputs: map[string]string{}} }

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
	if c.block == "" {
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
	c.outputs[k] = v
}

func (c *Capture) addProvides(s string) {
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if !containsStr(c.provides, p) {
			c.provides = append(c.provides, p)
		}
	}
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

// InOutputsBlock reports whether the next line would be read as an output, so
// that a secret value can be masked before the line is shown.
func (c *Capture) InOutputsBlock() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.block == "outputs"
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
