package secret

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// replacedAsBefore is how Text masked before the matcher: a
// strings.Replacer of the values, longest first (ties in order).
func replacedAsBefore(values []string, s string) string {
	vals := append([]string(nil), values...)
	sort.Slice(vals, func(i, j int) bool {
		if len(vals[i]) != len(vals[j]) {
			return len(vals[i]) > len(vals[j])
		}
		return vals[i] < vals[j]
	})
	var pairs []string
	for _, v := range vals {
		pairs = append(pairs, v, Mask)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// TestMatcherMatchesTheReplacer: the matcher masks what a replacer of the
// values longest first masked: the longest secret at the leftmost place,
// secrets inside, overlapping and following each other, bytes that are not
// UTF-8, secrets that all begin alike, and values added after text was
// masked.
func TestMatcherMatchesTheReplacer(t *testing.T) {
	tests := []struct {
		values []string
		texts  []string
	}{
		{[]string{"abcd"}, []string{"", "abc", "abcd", "xabcdx", "abcdabcd", "ababcd", "abcabcd"}},
		{[]string{"abcd", "abcdef", "bcde"}, []string{"abcdef", "abcde", "xabcdefg", "abcdbcde", "aabcdeff"}},
		{[]string{"aaaa", "aaaaaa"}, []string{"aaaaaaaaa", "aaaaa", "aaaa aaaaaa aaaaaaa"}},
		{[]string{"pass", "password", "word"}, []string{"password", "passwor", "the word pass", "passpassword"}},
		{[]string{"\xff\xfe\x00z", "z\x00\x00\x00"}, []string{"\xff\xfe\x00z\x00\x00\x00", "a\xff\xfe\x00zz\x00\x00\x00"}},
		{[]string{"héllo", "llo wo"}, []string{"héllo world", "hello world"}},
		// All begin alike: the scan jumps to their common start.
		{[]string{"secret-1", "secret-22", "secret-333"}, []string{"secret-", "secret-2secret-22", "xsecret-3333 secret-1secret-333", "secretsecret-1"}},
	}
	for _, tt := range tests {
		m := newMatcher()
		var added []string
		for _, v := range tt.values {
			m.add(v)
			added = append(added, v)
			for _, s := range tt.texts {
				if got, want := m.replace(s, Mask), replacedAsBefore(added, s); got != want {
					t.Errorf("values %q: replace(%q) = %q, the replacer gave %q", added, s, got, want)
				}
			}
		}
	}
	if got := newMatcher().replace("nothing to mask", Mask); got != "nothing to mask" {
		t.Errorf("an empty matcher changed the text: %q", got)
	}
}

// FuzzMatcher compares the matcher with the replacer it replaced on any
// values and text: a difference could show a secret.
func FuzzMatcher(f *testing.F) {
	f.Add("abcd\nabcdef\nbcde", "xabcdefg abcde")
	f.Add("aaaa\naaaaaa", "aaaaaaaaaaa")
	f.Add("s3cret-pass\ns3cret", "s3cret and s3cret-pass")
	f.Add("abcd\nxyzw-1\nmnop\nxyzw-2", "x xyzw-2 abc abcd mnopq xyzw-")
	f.Fuzz(func(t *testing.T, values, text string) {
		if len(values) > 4096 || len(text) > 4096 {
			return
		}
		m := newMatcher()
		var added []string
		for _, v := range strings.Split(values, "\n") {
			if v == "" {
				continue
			}
			m.add(v)
			added = append(added, v)
		}
		if got, want := m.replace(text, Mask), replacedAsBefore(added, text); got != want {
			t.Errorf("values %q: replace(%q) = %q, the replacer gave %q", added, text, got, want)
		}
	})
}

// BenchmarkMaskLine masks a log line of 200 bytes holding one of 20
// secrets, with the matcher and with the replacer it replaced.
func BenchmarkMaskLine(b *testing.B) {
	var values []string
	m := NewMasker()
	for i := 0; i < 20; i++ {
		v := fmt.Sprintf("secret-value-%02d-%x", i, i*7919)
		values = append(values, v)
		m.Add(v)
	}
	line := strings.Repeat("terraform: module.x.aws_instance[0]: Still creating... ", 4)[:180] + values[7]
	b.Run("matcher", func(b *testing.B) {
		for b.Loop() {
			m.Text(line)
		}
	})
	b.Run("replacer", func(b *testing.B) {
		r := strings.NewReplacer(func() []string {
			var pairs []string
			for _, v := range values {
				pairs = append(pairs, v, Mask)
			}
			return pairs
		}()...)
		for b.Loop() {
			r.Replace(line)
		}
	})
}

// TestMatcherNodesPerSecret: the trie holds at most two nodes per secret
// however long they are (values may be 16 MiB), and still masks them.
func TestMatcherNodesPerSecret(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB
	values := []string{big, big[:1<<20] + "-other", "s3cret", "s3cr", big[:100] + "x", "abc-" + big[:1000]}
	m := newMatcher()
	for _, v := range values {
		m.add(v)
	}
	if n := len(m.nodes) - 1; n > 2*len(values) {
		t.Errorf("%d nodes for %d secrets", n, len(values))
	}
	for _, tt := range []struct{ text, want string }{
		{"x" + big + "y", "x" + Mask + "y"},
		{big[:1<<20] + "-other!", Mask + "!"},
		{big[:100] + "xy", Mask + "y"},
		{"the s3cret and s3cr", "the " + Mask + " and " + Mask},
		{big[:5000], big[:5000]},
	} {
		if got := m.replace(tt.text, Mask); got != tt.want {
			t.Errorf("replace of %d bytes: got %d bytes, want %d", len(tt.text), len(got), len(tt.want))
		}
	}
}
