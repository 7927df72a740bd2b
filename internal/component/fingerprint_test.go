package component

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"testing"

	"github.com/gantry-dev/gantry/internal/params"
)

// fingerprintOracle is Fingerprint as it was first written: the text every
// recorded fingerprint was made from. Fingerprint must keep giving what it
// gives, or every component of every stack would look changed.
func fingerprintOracle(verb, dirSum string, exp *params.Expanded, upstream map[string]map[string]string) string {
	h := sha256.New()
	fmt.Fprintf(h, "verb %s\n", verb)
	if exp != nil {
		for _, v := range exp.Values {
			fmt.Fprintf(h, "param %q %q %q\n", v.Name, v.Value, v.Env)
		}
	}
	comps := make([]string, 0, len(upstream))
	for c := range upstream {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	for _, c := range comps {
		keys := make([]string, 0, len(upstream[c]))
		for k := range upstream[c] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(h, "output %q %q %q\n", c, k, upstream[c][k])
		}
	}
	fmt.Fprintf(h, "dir %s\n", dirSum)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func TestFingerprintKeepsItsText(t *testing.T) {
	exp := func(vals ...string) *params.Expanded {
		e := &params.Expanded{}
		for i := 0; i+2 < len(vals); i += 3 {
			e.Values = append(e.Values, &params.Value{Name: vals[i], Value: vals[i+1], Env: vals[i+2]})
		}
		return e
	}
	tests := []struct {
		name     string
		verb     string
		dirSum   string
		exp      *params.Expanded
		upstream map[string]map[string]string
	}{
		{"bare", "deploy", "", nil, nil},
		{"parameters", "deploy", "abc", exp("a", "1", "A", "b", "two words", ""), nil},
		{"quoting", "undeploy", "d", exp("x", "tab\there \"q\" \\ é \x00 \xff", "X", "emoji", "😀\u2028", "E"), nil},
		{"outputs", "deploy", "d", nil, map[string]map[string]string{
			"db":  {"host": "h", "port": "5432"},
			"app": {"url": "https://x\n"},
			"nil": nil,
		}},
		{"everything", "deploy", "sum", exp("p", "v", "P"), map[string]map[string]string{"c": {"k": "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Fingerprint(tt.verb, tt.dirSum, "", tt.exp, tt.upstream)
			if want := fingerprintOracle(tt.verb, tt.dirSum, tt.exp, tt.upstream); got != want {
				t.Errorf("Fingerprint = %s, the text it was always made from gives %s", got, want)
			}
			// A lifecycle the stack's entry sets makes it another.
			if Fingerprint(tt.verb, tt.dirSum, "digest", tt.exp, tt.upstream) == got {
				t.Error("the entry's lifecycle changes nothing")
			}
		})
	}
}

func FuzzFingerprint(f *testing.F) {
	f.Add("deploy", "sum", "name", "value", "ENV", "comp", "key", "out")
	f.Add("", "", "", "\x00\xff\"\\", "", "", "", "\u2028")
	f.Fuzz(func(t *testing.T, verb, dirSum, name, value, env, comp, key, out string) {
		e := &params.Expanded{Values: []*params.Value{{Name: name, Value: value, Env: env}, {Name: value, Value: name}}}
		up := map[string]map[string]string{comp: {key: out, out: key}, key: {comp: value}}
		if got, want := Fingerprint(verb, dirSum, "", e, up), fingerprintOracle(verb, dirSum, e, up); got != want {
			t.Errorf("Fingerprint = %s, want %s", got, want)
		}
	})
}

// BenchmarkFingerprint is a component with a few parameters after two
// others, beside the oracle (fmt into the hash).
func BenchmarkFingerprint(b *testing.B) {
	b.Run("now", func(b *testing.B) {
		benchmarkFingerprint(b, func(verb, dirSum string, e *params.Expanded, up map[string]map[string]string) string {
			return Fingerprint(verb, dirSum, "", e, up)
		})
	})
	b.Run("oracle", func(b *testing.B) { benchmarkFingerprint(b, fingerprintOracle) })
}

func benchmarkFingerprint(b *testing.B, fingerprint func(string, string, *params.Expanded, map[string]map[string]string) string) {
	e := &params.Expanded{}
	for i := 0; i < 8; i++ {
		e.Values = append(e.Values, &params.Value{Name: fmt.Sprintf("param.%d", i), Value: fmt.Sprintf("value-%d", i), Env: fmt.Sprintf("PARAM_%d", i)})
	}
	up := map[string]map[string]string{"db": {"host": "db.local", "port": "5432"}, "net": {"vpc": "vpc-123"}}
	for i := 0; i < b.N; i++ {
		fingerprint("deploy", "0123456789abcdef", e, up)
	}
}
