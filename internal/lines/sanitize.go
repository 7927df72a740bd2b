package lines

import (
	"strings"
	"unicode/utf8"
)

// Sanitize makes a line of a component's output safe to show on a terminal:
// it removes escape sequences (colours, cursor moves, titles, hyperlinks,
// device controls, 7- and 8-bit forms) and control characters, shows a tab as
// a space, keeps what a carriage return would leave visible (the text after
// the last one), and replaces invalid UTF-8. What is left is only printable
// text: it cannot set attributes, move the cursor or clear the screen, so it
// cannot bleed into the lines drawn after it. The run logs keep the raw text.
func Sanitize(s string) string {
	if IsPlain(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if i := strings.LastIndexByte(strings.TrimRight(s, "\r\n"), '\r'); i >= 0 {
		s = s[i+1:]
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b: // ESC
			i += EscapeLen(s[i:])
			continue
		case r == 0x9b: // 8-bit CSI
			i += size + csiLen(s[i+size:])
			continue
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // 8-bit DCS, SOS, OSC, PM, APC
			i += size + stringLen(s[i+size:])
			continue
		case r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// other C0 and C1 controls: bell, backspace, CR, SI/SO, …
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// IsPlain reports whether s has nothing for Sanitize to do: no control
// character, no byte past ASCII.
func IsPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= 0x80 {
			return false
		}
	}
	return true
}

// EscapeLen is the length of the escape sequence at the start of s (s[0] is
// ESC); a sequence cut off by the end of s takes the rest of it.
func EscapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[': // CSI
		return 2 + csiLen(s[2:])
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: strings up to ST or BEL
		return 2 + stringLen(s[2:])
	}
	// nF sequences (ESC, intermediates 0x20–0x2F, a final byte) and the
	// two-byte Fp/Fe/Fs ones (ESC 7, ESC c, ESC =, …).
	i := 1
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// csiLen is the length of a control sequence's parameters, intermediates and
// final byte at the start of s.
func csiLen(s string) int {
	i := 0
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// stringLen is the length of a control string and its terminator (BEL, ESC \
// or 8-bit ST) at the start of s; unterminated, the rest of s.
func stringLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0x1b: // an escape ends the string and starts anew
			return i
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
	}
	return len(s)
}
