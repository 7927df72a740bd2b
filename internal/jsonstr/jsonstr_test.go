package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// awkward are strings whose escapes differ between encoders.
var awkward = []string{"", "plain", "quote \" back \\ slash", "<tag>&amp;", "\b\f\n\r\t\x00\x1f\x7f",
	"é 日本 🚀", "bad \xff\xfe utf8 \xc3", "line\u2028para\u2029", "\u00a0\ufeff", "%s {{.}} ${x}"}

func TestAppendLikeEncodingJSON(t *testing.T) {
	for _, s := range awkward {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("%q: got %s, want x%s", s, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
