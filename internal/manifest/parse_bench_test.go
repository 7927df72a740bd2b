package manifest

import (
	"fmt"
	"strings"
	"testing"
)

// paramsFile is a params file of n plain parameters, the shape of the
// 700,000-parameter file of issue 12 (item 4).
func paramsFile(n int) []byte {
	var b strings.Builder
	b.WriteString("parameters:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - name: p%d.value\n    value: v%d\n", i, i)
	}
	return []byte(b.String())
}

// BenchmarkLoadParams parses and decodes a params file of 50,000
// parameters: the time and memory grow linearly with the count.
func BenchmarkLoadParams(b *testing.B) {
	data := paramsFile(50_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		docs, diags := ParseBytes("params.yaml", data)
		ps, _ := DecodeParams(docs, &diags)
		if diags.HasErrors() || len(ps) != 50_000 {
			b.Fatalf("got %d parameters, %v", len(ps), diags)
		}
	}
}
