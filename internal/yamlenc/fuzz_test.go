package yamlenc

import (
	"errors"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
)

// words are strings that exercise goccy's quoting rules.
var words = []string{"a", "name", "", "true", "1", "1.5", "-", "a: b", "x:", "#c", "a #c", "{", "[x]", "'q'", "\"", "null", "~", "2024-01-02", "0o17", "é", "a b", " a", "a ", "*", "&x", "!t", "%p", "@a", "`", "|", ">", "a\\b", "- a", "a-b", "a:b", "x/y", "\t", "yes", "NaN", ".inf", "0x1g", "a\nb", "a\n", "a\n\n", "\n", "a\n\nb", "a\n  b", "  a\nb", "a\n   ", "a  \nb", "x\r\ny", "run: |\n x", "a\n  \n", "a\n      \n", "x\n \n", "\n\n", "a\n\t"}

// gen builds a value from fuzz input: a small program of one byte per
// choice.
type gen struct {
	data []byte
	n    int // values made, bounded so that inputs stay small
}

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) str() string {
	b := g.byte()
	if b < 200 {
		return words[int(b)%len(words)]
	}
	n := int(b - 200)
	if n > len(g.data) {
		n = len(g.data)
	}
	s := string(g.data[:n])
	g.data = g.data[n:]
	return s
}

func (g *gen) value(depth int) any {
	g.n++
	op := g.byte()
	if depth > 6 || g.n > 200 {
		op %= 5
	}
	switch op % 13 {
	case 0:
		return g.str()
	case 1:
		return int(int8(g.byte()))
	case 2:
		return float64(int8(g.byte())) / 4
	case 3:
		return g.byte()%2 == 0
	case 4:
		return nil
	case 5, 6:
		m := map[string]any{}
		for i := int(g.byte() % 5); i > 0; i-- {
			m[g.str()] = g.value(depth + 1)
		}
		return m
	case 7, 8:
		var s []any
		for i := int(g.byte() % 5); i > 0; i-- {
			s = append(s, g.value(depth+1))
		}
		return s
	case 9:
		w := withInline{Base: Base{Kind: g.str(), Version: int(g.byte() % 3)}, Kind: g.str(), Any: g.value(depth + 1)}
		if g.byte()%2 == 0 {
			w.Inner = inner{Name: g.str(), Tags: []string{g.str()}}
		}
		if g.byte()%2 == 0 {
			w.Ptr = &inner{Name: g.str(), Extra: map[string]any{g.str(): g.value(depth + 1)}}
		}
		for i := int(g.byte() % 3); i > 0; i-- {
			w.Items = append(w.Items, inner{Name: g.str()})
		}
		if g.byte()%2 == 0 {
			w.Labels = map[string]string{g.str(): g.str()}
		}
		return w
	case 10:
		return doc{Meta: Meta{Name: g.str()}, Steps: []step{{Run: g.str()}, {}}}
	case 12:
		var ms yaml.MapSlice
		for i := int(g.byte() % 4); i > 0; i-- {
			ms = append(ms, yaml.MapItem{Key: g.str(), Value: g.value(depth + 1)})
		}
		return ms
	default:
		return []withZeroer{{Z: zeroable{N: int(int8(g.byte()))}}}
	}
}

// FuzzMarshalMatchesGoccy: whatever yamlenc writes, goccy/go-yaml writes
// the same bytes.
func FuzzMarshalMatchesGoccy(f *testing.F) {
	f.Add([]byte{5, 3, 1, 7, 2, 0, 4, 5, 1, 9, 0})
	f.Add([]byte{7, 4, 9, 1, 2, 3, 0, 1, 1, 1, 2, 1, 0, 1, 6, 2, 10, 5, 7, 3, 0, 11, 9})
	f.Add([]byte{9, 3, 4, 1, 5, 0, 6, 0, 2, 0, 0, 7, 1, 1, 8})
	f.Add([]byte{6, 2, 210, 'a', '\n', 'b', 0, 0, 1, 0, 4, 255, 254})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{data: data}
		v := g.value(0)
		got, err := Marshal(v)
		if errors.Is(err, ErrUnsupported) {
			return
		}
		want, werr := goccy(v)
		if err != nil || werr != nil {
			if (err == nil) != (werr == nil) {
				t.Fatalf("Marshal error %v, goccy error %v", err, werr)
			}
			return
		}
		if string(got) != string(want) {
			t.Fatalf("Marshal differs from goccy for %#v\n--- got\n%s--- want\n%s", v, got, want)
		}
	})
}

// FuzzPlainWord: what plainWord lets through unquoted, goccy does not quote.
func FuzzPlainWord(f *testing.F) {
	for _, w := range words {
		f.Add(w)
	}
	f.Add("falsey")
	f.Add("n00001.size")
	f.Add("Infinity")
	f.Add("NaN.abc")
	f.Fuzz(func(t *testing.T, s string) {
		if plainWord(s) && token.IsNeedQuoted(s) {
			t.Fatalf("plainWord(%q) but goccy quotes it", s)
		}
	})
}
