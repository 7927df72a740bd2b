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

// MinLength is the shortest value masked inside other text: shorter secrets
// would hide ordinary words everywhere. They are still masked where they are
// shown as whole values.
const MinLength = 4

// Masker replaces known secret values in text. It is safe for concurrent use;
// values can be added while a run goes on (secret outputs).
type Masker struct {
	mu       sync.RWMutex
	values   map[string]bool
	replacer *strings.Replacer
}

// NewMasker returns a masker that knows values.
func NewMasker(values ...string) *Masker {
	m := &Masker{values: map[string]bool{}}
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
		if len(v) >= MinLength && !m.values[v] {
			m.values[v] = true
			changed = true
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
	m.mu.RUnlock()
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
