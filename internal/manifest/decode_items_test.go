package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeItemsLikeInOrder: a long list decoded on several workers gives
// the stack, the problems in their order and the positions that decoding
// its items one after the other gives.
func TestDecodeItemsLikeInOrder(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nkind: stack\nmeta: {name: big}\ncomponents:\n")
	for i := range 1500 {
		fmt.Fprintf(&b, "  - name: c%04d\n    source: {dir: comp}\n", i)
		switch i % 250 {
		case 3:
			b.WriteString("    colour: red\n") // an unknown field
		case 7:
			b.WriteString("    depends: 42\n") // not a list
		case 11:
			fmt.Fprintf(&b, "    depends: [c%04d]\n    lifecycle: {timeout: 2x}\n", i-1)
		}
	}
	decode := func(from int) (*Stack, Diagnostics) {
		saved := parallelItems
		defer func() { parallelItems = saved }()
		parallelItems = from
		docs, diags := ParseBytes("hub.yaml", []byte(b.String()))
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		st := DecodeStack(docs[0], &diags)
		return st, diags
	}
	inOrder, od := decode(1 << 30)
	parallel, pd := decode(2)
	if len(od.Errors()) < 18 {
		t.Fatalf("only %d errors: %v", len(od.Errors()), od.Err())
	}
	if diff := cmp.Diff(od, pd); diff != "" {
		t.Errorf("problems (-in order +on workers):\n%s", diff)
	}
	if diff := cmp.Diff(inOrder, parallel); diff != "" {
		t.Errorf("stacks (-in order +on workers):\n%s", diff)
	}
}
