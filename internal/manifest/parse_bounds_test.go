package manifest

import (
	"bytes"
	"strings"
	"testing"
)

// TestParseBoundsValues: a file of more lines and flow items than
// maxValues is refused before it is parsed, at the line where it passes
// the bound: a 40 MB list took 6 GB. Commas and newlines inside quotes
// and comments count too (the bound is on the cost), and a file just
// within it is parsed.
func TestParseBoundsValues(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("meta:\n  annotations:\n    x: [")
	b.WriteString(strings.Repeat("a,", maxValues))
	b.WriteString("a]\n")
	_, diags := ParseBytes("big.yaml", b.Bytes())
	if len(diags) != 1 || diags[0].Pos.Line != 3 || !strings.Contains(diags[0].Msg, "more than 4000000 lines and list items in one file") {
		t.Errorf("diagnostics %v, want the bound at line 3", diags)
	}
	docs, diags := ParseBytes("within.yaml", []byte("x: ["+strings.Repeat("a,", 1000)+"a]\n"))
	if len(diags) != 0 || len(docs) != 1 {
		t.Errorf("a file within the bound: %d documents, %v", len(docs), diags)
	}
}
