package manifest

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// TestParseGzip: a gzip-compressed file (the Hub CLI's elaborated file by
// default) is said to be one, at 1:1, with what to do; other bytes that are
// not UTF-8 are still reported where they are.
func TestParseGzip(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("version: 1\nkind: stack\nmeta: {name: base}\n"))
	w.Close()
	for _, tc := range []struct{ data, want string }{
		{gz.String(), "hub.yaml.elaborate:1:1: a gzip-compressed file, as the Hub CLI writes its elaborated files and states: gantry reads plain YAML. Give gantry the stack's hub.yaml"},
		{"a: 1\nb: \xff\n", "hub.yaml.elaborate:2:4: invalid UTF-8 (byte 0xff): manifests are UTF-8 text"},
	} {
		_, diags := ParseBytes("hub.yaml.elaborate", []byte(tc.data))
		if len(diags) != 1 || !strings.HasPrefix(diags[0].String(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.data[:4], diags, tc.want)
		}
	}
}
