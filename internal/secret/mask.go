// Package secret masks secret values wherever text leaves gantry: displays,
// logs, JSON events.
package secret

import (
	"sort"
	"strings"
	"sync"
)

// Mask is what a secret is shown as.
const Mask = "*****"

// MinLength is the shortest value masked anywhere in other text. Shorter
// secrets are masked only as whole words (between characters that are not
// letters or digits), since masking "abc" inside every word would garble all
// output.
const MinLength = 4

// Masker replaces known secret values in text. It is safe for concurrent use;
// values can be added while a run goes on (secret outputs).
type Masker struct {
	mu       sync.RWMutex
	values   map[string]bool
	short    map[string]bool
	replacer *strings.Replacer
}

// NewMasker returns a masker that knows values.
func NewMasker(values ...string) *Masker {
	m := &Masker{values: map[string]bool{}, short: map[string]bool{}}
	m.Add(values...)
	return m
}

// Add makes more values secret.
func (m *Masker) Add(values ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := false
	for _, v := range values {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
		case len(v) >= MinLength && !m.values[v]:
			m.values[v] = true
			changed = true
		case len(v) < MinLength:
			m.short[v] = true
		}
	}
	if changed {
		m.replacer = nil
	}
}

// Text returns s with every known secret value replaced by the mask.
func (m *Masker) Text(s string) string {
	if m == nil || s == "" {
		return s
	}
	m.mu.RLock()
	r := m.replacer
	n := len(m.values)
	short := len(m.short) > 0
	m.mu.RUnlock()
	if short {
		s = m.maskShort(s)
	}
	if n == 0 {
		return s
	}
	if r == nil {
		m.mu.Lock()
		if m.replacer == nil {
			// Longest first, so that a secret containing another is masked whole.
			vals := make([]string, 0, len(m.values))
			for v := range m.values {
				vals = append(vals, v)
			}
			sort.Slice(vals, func(i, j int) bool {
				if len(vals[i]) != len(vals[j]) {
					return len(vals[i]) > len(vals[j])
				}
				return vals[i] < vals[j]
			})
			pairs := make([]string, 0, 2*len(vals))
			for _, v := range vals {
				pairs = append(pairs, v, Mask)
			}
			m.replacer = strings.NewReplacer(pairs...)
		}
		r = m.replacer
		m.mu.Unlock()
	}
	return r.Replace(s)
}

// Value shows a value: the mask when it is secret, else the value with any
// secret inside it masked.
func (m *Masker) Value(v string, isSecret bool) string {
	if isSecret && v != "" {
		return Mask
	}
	return m.Text(v)
}

// maskShort masks short secrets that stand as whole words.
func (m *Masker) maskShort(s string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
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
