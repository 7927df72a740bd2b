// Package secret masks secret values wherever text leaves gantry: displays,
// logs, JSON events.
package secret

import (
	"strconv"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/lines"
)

// Mask is what a secret is shown as.
const Mask = "*****"

// Shown is how a message shows a value: Mask for a secret, else quoted and
// cut past 100 characters.
func Shown(v string, secret bool) string {
	if secret {
		return Mask
	}
	const max = 100
	if r := []rune(v); len(r) > max+2 {
		v = string(r[:max]) + "..."
	}
	return strconv.Quote(v)
}

// MinLength is the shortest value masked anywhere in other text. Shorter
// secrets are masked only as whole words (between characters that are not
// letters or digits), since masking "abc" inside every word would garble all
// output.
const MinLength = 4

// minWrappedLine is the shortest line of a wrapped encoding masked inside
// other text; a shorter one (the end of a base64 encoding) is masked where
// it stands as a word.
const minWrappedLine = 16

// Masker replaces known secret values in text. It is safe for concurrent use;
// values can be added while a run goes on (secret outputs).
type Masker struct {
	mu     sync.RWMutex
	values map[string]bool
	short  map[string]bool
	// whole are the values given to Add (not their encodings or lines).
	whole map[string]bool
	// found finds the values in text; it grows with them.
	found *matcher
}

// NewMasker returns a masker that knows values.
func NewMasker(values ...string) *Masker {
	m := &Masker{values: map[string]bool{}, short: map[string]bool{}, whole: map[string]bool{}, found: newMatcher()}
	m.Add(values...)
	return m
}

// Add makes more values secret, and their common encodings (encodings:
// URL escapes, base64, JSON's escapes) with them. Output reaches the displays and logs one line at a time, so each line of a value of several lines (a PEM key, a
// kubeconfig) is a secret of its own too; lines shorter than MinLength
// (a lone "}") are not, as they would mask every such line of any output.
// The words true and false are never masked inside other text: a secret
// that is a yes or no (a value computed from a secret, as
// #{db.password != ""}) tells nothing of it, and masking them would garble
// every log line holding the word.
func (m *Masker) Add(values ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	add := func(v string, lineOfMany bool) {
		v = strings.TrimSpace(v)
		switch {
		case v == "" || v == "true" || v == "false":
		case len(v) >= MinLength && !m.values[v]:
			m.values[v] = true
			m.found.add(v)
		case len(v) < MinLength && !lineOfMany:
			m.short[v] = true
		}
	}
	for _, v := range values {
		t := strings.TrimSpace(v)
		if m.whole[t] {
			continue // known, with its encodings and lines
		}
		m.whole[t] = true
		add(v, false)
		if len(t) >= MinLength && t != "true" && t != "false" {
			for _, e := range encodings(t) {
				add(e, true)
				if strings.Contains(e, "\n") {
					// Wrapped (base64): shown a line at a time. A short
					// last line is masked only as a word: inside other
					// words it would garble them ("*****ening").
					for _, line := range splitLines(e) {
						if len(line) < minWrappedLine {
							if len(line) >= MinLength {
								m.short[line] = true
							}
							continue
						}
						add(line, true)
					}
				}
			}
			// As a terminal shows it (Text masks a line with escapes
			// so): a tab is a space there, a byte that is no UTF-8 a
			// replacement character.
			if shown := lines.Sanitize(t); shown != t {
				add(shown, true)
			}
		}
		if strings.ContainsAny(v, "\n\r") {
			for _, line := range splitLines(v) {
				add(line, true)
			}
		}
	}
}

// Empty reports whether the masker knows no secret: masking with it
// changes nothing.
func (m *Masker) Empty() bool {
	if m == nil {
		return true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.values) == 0 && len(m.short) == 0
}

// Known is how many values the masker was given (Add): it grows when a run
// learns a secret, which text written before then does not mask.
func (m *Masker) Known() int {
	if m == nil {
		return 0
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.whole)
}

// AddComputed makes secret values computed from secrets (a step argument
// #{db.password.substring(0, 6)}): those of at least MinLength, since a
// short one (a yes, a length) masked as a word everywhere would garble the
// output of every component and tell nothing of the secret.
func (m *Masker) AddComputed(values ...string) {
	for _, v := range values {
		if len(strings.TrimSpace(v)) >= MinLength {
			m.Add(v)
		}
	}
}

// splitLines splits s at "\n", "\r\n" and a lone "\r", as output is split
// into lines.
func splitLines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
}

// Text returns s with every known secret value replaced by the mask. Text
// with escape sequences or control characters is also masked as a terminal
// shows it (lines.Sanitize): a colour change between a secret's characters
// (a word diff) hides it from the match, and the display strips it; when
// that finds a secret, the line is given without its escapes, masked.
func (m *Masker) Text(s string) string {
	if m == nil || s == "" {
		return s
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := m.mask(s)
	if len(m.values) > 0 && hasControls(out) {
		if shown := lines.Sanitize(out); m.mask(shown) != shown {
			return m.mask(shown)
		}
	}
	return out
}

// mask replaces the known values in s (m.mu held).
func (m *Masker) mask(s string) string {
	if len(m.short) > 0 {
		s = m.maskShort(s)
	}
	return m.found.replace(s, Mask)
}

// hasControls reports whether s holds a control character other than a
// tab: an escape sequence begins with one (ESC, or an 8-bit C1).
func hasControls(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f || c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
			return true
		}
	}
	return false
}

// Value shows a value: the mask when it is secret, else the value with any
// secret inside it masked.
func (m *Masker) Value(v string, isSecret bool) string {
	if isSecret && v != "" {
		return Mask
	}
	return m.Text(v)
}

// Piece masks one piece of a stream of output: a line, or a part of a line
// too long to be held back whole (continued says it goes on from the
// stream's last piece, continues that the line goes on in its next one, as
// lines.NewPieceWriter tells). A secret cut in two at the end of a piece is
// masked in both: the end of a piece that begins a secret, and the start
// of the next piece that ends it. The flags come from the stream's own
// writer: a step's stdout and stderr are two streams, and a line of one
// between two pieces of the other must not end the cut one.
func (m *Masker) Piece(text string, continued, continues bool) string {
	if m == nil {
		return text
	}
	if !continued && !continues {
		return m.Text(text)
	}
	if continued && continues && m.inside(text) {
		return Mask // the middle of a secret longer than a piece
	}
	var head, tail string
	if continued {
		if k := m.edge(text, false); k > 0 {
			text, head = text[k:], Mask
		}
	}
	if continues {
		if k := m.edge(text, true); k > 0 {
			text, tail = text[:len(text)-k], Mask
		}
	}
	return head + m.Text(text) + tail
}

// inside reports whether text is part of a known secret.
func (m *Masker) inside(text string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for v := range m.values {
		if strings.Contains(v, text) {
			return true
		}
	}
	return false
}

// edge returns the length of the longest end of text (atEnd) that begins a
// known secret, or of the longest start of text that ends one.
func (m *Masker) edge(text string, atEnd bool) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	best := 0
	for v := range m.values {
		if k := overlap(text, v, atEnd); k > best {
			best = k
		}
	}
	return best
}

// overlap is the length of the longest end of text that begins v (atEnd),
// or of the longest start of text that ends v; shorter than v. Candidates
// are found with strings.IndexByte, the longest first: a piece of 64 KiB
// against secrets of 100 KB took a byte-by-byte loop over every length.
func overlap(text, v string, atEnd bool) int {
	if text == "" || len(v) < 2 {
		return 0
	}
	if atEnd {
		return suffixPrefix(text, v, max(0, len(text)-len(v)+1))
	}
	return suffixPrefix(v, text, max(1, len(v)-len(text)))
}

// suffixPrefix is the length of the longest end of a, beginning at from or
// later, that begins b (from keeps it no longer than b).
func suffixPrefix(a, b string, from int) int {
	for p := from; p < len(a); p++ {
		j := strings.IndexByte(a[p:], b[0])
		if j < 0 {
			return 0
		}
		p += j
		if a[p:] == b[:len(a)-p] {
			return len(a) - p
		}
	}
	return 0
}

// maskShort masks short secrets that stand as whole words (m.mu held).
func (m *Masker) maskShort(s string) string {
	for v := range m.short {
		if !strings.Contains(s, v) {
			continue
		}
		var b strings.Builder
		last := 0
		for i := 0; i+len(v) <= len(s); {
			j := strings.Index(s[i:], v)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(v)
			if (start == 0 || !isWordByte(s[start-1])) && (end == len(s) || !isWordByte(s[end])) {
				b.WriteString(s[last:start])
				b.WriteString(Mask)
				last = end
			}
			i = start + 1
			if last > i {
				i = last
			}
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
