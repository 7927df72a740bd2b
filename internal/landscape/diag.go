package landscape

import (
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// positions finds where a node path lies in a YAML file, for diagnostics:
// spiff names a node by its path, an editor wants file:line:col. Files are
// parsed once (the node tree keeps spiff's merge keys as they are written).
type positions struct {
	mu    sync.Mutex
	trees map[string]*yaml.Node
}

func newPositions() *positions { return &positions{trees: map[string]*yaml.Node{}} }

// at returns the position of path in file: the deepest node of the path
// that exists there, or the file alone when it cannot be read.
func (p *positions) at(file string, path []string) manifest.Pos {
	pos, _ := p.find(file, path)
	return pos
}

// find is at, and whether the whole path is in the file.
func (p *positions) find(file string, path []string) (manifest.Pos, bool) {
	pos := manifest.Pos{File: file}
	p.mu.Lock()
	root, ok := p.trees[file]
	if !ok {
		var doc yaml.Node
		// Bounded and regular files only: spiff names documents gantry made
		// up ("env") that a file of the working folder may be called.
		if data, err := readFile(file); err == nil && yaml.Unmarshal(data, &doc) == nil {
			root = &doc
		}
		p.trees[file] = root
	}
	p.mu.Unlock()
	if root == nil {
		return pos, false
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	pos.Line, pos.Col = n.Line, n.Column
	for _, step := range path {
		next, keyNode := child(n, step)
		if next == nil {
			return pos, false
		}
		n = next
		if keyNode != nil {
			pos.Line, pos.Col = keyNode.Line, keyNode.Column
		} else {
			pos.Line, pos.Col = n.Line, n.Column
		}
	}
	return pos, true
}

// child steps from n to its entry named step: a key of a mapping, or an
// index "[i]" (or an element's name, as spiff names list entries that
// have one) of a sequence. It returns the value and, for mappings, the key.
func child(n *yaml.Node, step string) (value, key *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == step {
				return n.Content[i+1], n.Content[i]
			}
		}
	case yaml.SequenceNode:
		if strings.HasPrefix(step, "[") && strings.HasSuffix(step, "]") {
			if i, err := strconv.Atoi(step[1 : len(step)-1]); err == nil && i >= 0 && i < len(n.Content) {
				return n.Content[i], nil
			}
		}
		for _, e := range n.Content {
			if v, _ := child(e, "name"); v != nil && v.Value == step {
				return e, nil
			}
		}
	}
	return nil, nil
}

// diagnostics turns spiff's issues into positioned errors; field names the
// control file's role ("deployment.yaml", "component.yaml") when spiff
// gives no path.
func (p *positions) diagnostics(issues []Issue, what string) manifest.Diagnostics {
	var ds manifest.Diagnostics
	for _, is := range issues {
		field := strings.Join(is.Path, ".")
		pos := p.at(is.File, is.Path)
		if is.Line > 0 {
			pos.Line, pos.Col = is.Line, is.Col
		}
		ds.Errorf(pos, field, "%s: %s", what, is.Msg)
	}
	return ds
}
