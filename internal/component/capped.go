package component

import (
	"strings"
)

// cappedBuffer collects rendered text and refuses to grow past max bytes, so
// that a loop printing a long value cannot fill the memory.
type cappedBuffer struct {
	b   strings.Builder
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.b.Len()+len(p) > c.max {
		return 0, limitErrorf("the template renders more than %d bytes", c.max)
	}
	return c.b.Write(p)
}

// WriteString is Write for strings.
func (c *cappedBuffer) WriteString(s string) (int, error) {
	if c.b.Len()+len(s) > c.max {
		return 0, limitErrorf("the template renders more than %d bytes", c.max)
	}
	return c.b.WriteString(s)
}

func (c *cappedBuffer) String() string { return c.b.String() }
