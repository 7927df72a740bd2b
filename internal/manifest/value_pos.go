package manifest

import (
	"strconv"
	"strings"
)

// pointAtValues moves each diagnostic of diags that was reported at a
// mapping or list of root — a parameter's entry, a component's — about a
// field written inside it, to where that field's value is written:
// "parameters[0].kind: expected …" at 10:11, the kind's value, instead of
// 9:5, the entry's first key. The checks work on decoded structs, which
// keep one position per entry (a position per field of 700,000 parameters
// cost 11 % more memory); the positions are found again in the parsed
// document only for the few diagnostics there are.
//
// prefix is the part of the field paths that root stands for: "" when
// root is a document whose paths start at its keys, "parameters" for a
// params document that is a plain list. Diagnostics of other paths, of
// other files, or already at a position inside the field are left alone,
// as are fields root does not write (a kind a nested parameter inherits).
// A field an entry takes from a merge key (<<: *defaults) is pointed at
// where the anchor writes it: the one place to change it.
func pointAtValues(root *Node, prefix string, diags Diagnostics) {
	if root == nil {
		return
	}
	for i := range diags {
		d := &diags[i]
		rest, ok := strings.CutPrefix(d.Field, prefix)
		if !ok || d.Pos.File != root.Pos.File || rest == "" {
			continue
		}
		if p, ok := fieldValuePos(root, rest, d.Pos); ok {
			d.Pos = p
		}
	}
}

// fieldValuePos follows path ("components[1].depends[0]", "[3].env") from
// n and returns the position of the node it ends at, if one of the nodes on
// the way is at at: the diagnostic was placed on an enclosing entry.
func fieldValuePos(n *Node, path string, at Pos) (Pos, bool) {
	root, enclosing := n, false
	for path != "" {
		if n.Pos == at {
			enclosing = true
		}
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if end < 0 || n.Kind != SeqNode {
				return Pos{}, false
			}
			i, err := strconv.Atoi(path[1:end])
			if err != nil || i < 0 || i >= len(n.Items) {
				return Pos{}, false
			}
			n, path = n.Items[i], path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			e := n.entry(path[:end])
			if e == nil || e.Value == nil || n == root && e.KeyPos == at {
				// Not written here, or about a key of the document itself:
				// an unknown field at the top is named by its key, and the
				// document is where its first key is.
				return Pos{}, false
			}
			n, path = e.Value, path[end:]
		}
	}
	return n.Pos, enclosing && n.Pos != at
}
