package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bigYAML is a manifest past cacheMinBytes with every kind of node:
// mappings, lists, scalars of each type, nulls, anchors and merges.
func bigYAML(n int) string {
	var b strings.Builder
	b.WriteString("kind: stack\nmeta:\n  name: big\ndefaults: &d\n  region: eu\n  size: 3\ncomponents:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: c%05d\n    <<: *d\n    enabled: %v\n    ratio: %d.5\n    nothing: ~\n    tags: [a, \"b c\", 'd']\n    text: |\n      line one %d\n      line two\n", i, i%2 == 0, i, i)
	}
	return b.String()
}

func TestTreeRoundTrip(t *testing.T) {
	inputs := map[string]string{
		"big":       bigYAML(50),
		"documents": "a: 1\n---\n- x\n- {y: [1, 2.5, true, null]}\n---\n\"\": empty key\n",
		"scalar":    "just text\n",
		"unicode":   "名前: \"日本\\u00e9\"\nemoji: 🚀\n",
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			want, diags := ParseBytes("f.yaml", []byte(in))
			if len(diags) > 0 {
				t.Fatal(diags)
			}
			sum := []byte("0123456789abcdef0123456789abcdef")
			got, err := decodeTree(encodeTree(want, sum), sum, "f.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("read back (-parsed +cached):\n%s", diff)
			}
		})
	}
}

// TestParseCache: a large file is parsed once; its tree is written when
// the command keeps it (its input was valid), never when it drops it; the
// next read of the same content comes from the cache and is the same tree;
// a change of content, a damaged tree and a file with problems are parsed.
func TestParseCache(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, ".gantry", "cache", "yaml")
	SetParseCache(cache)
	defer SetParseCache("")
	path := filepath.Join(dir, "hub.yaml")
	in := bigYAML(600)
	if len(in) < cacheMinBytes {
		t.Fatalf("test input of %d bytes is below the cache's threshold", len(in))
	}
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := ParseBytes(path, []byte(in))
	if _, diags := ParseFile(path); len(diags) > 0 {
		t.Fatal(diags)
	}
	DropParsedTrees()
	KeepParsedTrees()
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Fatalf("a dropped tree was written: %v", err)
	}
	first, diags := ParseFile(path)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	KeepParsedTrees()
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Fatalf("%d trees cached, want 1", len(entries))
	}
	tree := filepath.Join(cache, entries[0].Name())
	second, _ := ParseFile(path)
	for i, got := range [][]*Node{first, second} {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("read %d (-parsed +got):\n%s", i+1, diff)
		}
	}
	// A damaged tree is parsed again (and replaced).
	b, _ := os.ReadFile(tree)
	if err := os.WriteFile(tree, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := ParseFile(path); !cmp.Equal(want, got) {
		t.Error("a damaged tree was read")
	}
	KeepParsedTrees()
	if now, _ := os.ReadFile(tree); len(now) != len(b) {
		t.Error("the damaged tree was not replaced")
	}
	// Other content: another tree.
	changed := strings.Replace(in, "c00007", "renamed", 1)
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := ParseFile(path)
	if got[0].Get("components").Items[7].Get("name").Value != "renamed" {
		t.Error("a changed file was read from the cache")
	}
	KeepParsedTrees()
	// A file with problems is not cached: its diagnostics come every time.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(in+"dup: 1\ndup: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, diags := ParseFile(bad); len(diags) == 0 {
			t.Error("no diagnostics for a duplicate key")
		}
		KeepParsedTrees()
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 2 {
		t.Errorf("%d trees cached, want 2 (the bad file's is not)", len(entries))
	}
}

func TestParseCachePrunes(t *testing.T) {
	dir := t.TempDir()
	for i := range cacheKeep + 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pruneCache(dir)
	if entries, _ := os.ReadDir(dir); len(entries) != cacheKeep {
		t.Errorf("%d files left, want %d", len(entries), cacheKeep)
	}
}

// FuzzDecodeTree: a cached tree damaged in any way is refused or read, never
// a panic or a hang; one read is the tree that was written when the bytes
// are those written.
func FuzzDecodeTree(f *testing.F) {
	sum := []byte("0123456789abcdef0123456789abcdef")
	for _, in := range []string{bigYAML(2), "a: [1, {b: c}]\n", "x\n"} {
		docs, _ := ParseBytes("f.yaml", []byte(in))
		f.Add(encodeTree(docs, sum))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		docs, err := decodeTree(b, sum, "f.yaml")
		if err != nil {
			return
		}
		if again, err := decodeTree(encodeTree(docs, sum), sum, "f.yaml"); err != nil || !cmp.Equal(docs, again) {
			t.Fatalf("a tree read does not write and read back the same: %v", err)
		}
	})
}
