package plan

import (
	"encoding/json"
	"io"
	"maps"
	"slices"

	"github.com/gantry-dev/gantry/internal/jsonstr"
)

// streamJSON writes the plan on one line, the shape of jsonPlan, a node,
// an edge and a component at a time. Encoding the whole plan as one value
// built it in one buffer first: at 10,000 components a 13 MB buffer grown
// by doubling, whose fresh pages cost more than the encoding itself.
func (p *Plan) streamJSON(w io.Writer) error {
	var buf []byte
	var err error
	// put appends v's JSON; flush hands what is buffered to w once it is
	// large enough that writes stay few.
	put := func(v any) {
		if err != nil {
			return
		}
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			buf = append(buf, b...)
		}
	}
	raw := func(s string) { buf = append(buf, s...) }
	flush := func(force bool) {
		if err == nil && (force || len(buf) >= 64<<10) {
			_, err = w.Write(buf)
			buf = buf[:0]
		}
	}
	raw(`{"stack":`)
	put(p.Stack)
	raw(`,"verb":`)
	put(p.Verb)
	raw(`,"nodes":[`)
	for i, n := range p.Nodes {
		if i > 0 {
			raw(",")
		}
		if err == nil {
			buf, err = appendNodeJSON(buf, n)
		}
		flush(false)
	}
	raw(`],"edges":[`)
	// Edges by hand, exactly as encoding/json writes a jsonEdge: there are
	// several per step, and reflection cost more than the rest of the file.
	for i, e := range p.Edges {
		if i > 0 {
			raw(",")
		}
		buf = append(buf, `{"from":`...)
		buf = jsonstr.Append(buf, e.From)
		buf = append(buf, `,"to":`...)
		buf = jsonstr.Append(buf, e.To)
		buf = append(buf, `,"kind":`...)
		buf = jsonstr.Append(buf, e.Kind.String())
		buf = append(buf, '}')
		flush(false)
	}
	raw(`],"orphans":`)
	put(append([]string{}, p.Orphans...))
	if len(p.OrphansElsewhere) > 0 {
		raw(`,"orphansElsewhere":`)
		put(p.OrphansElsewhere)
	}
	if len(p.OrphanDependents) > 0 {
		raw(`,"orphanDependents":`)
		put(p.OrphanDependents)
	}
	if p.OrphansLeftBecause != "" {
		raw(`,"orphansLeftBecause":`)
		put(p.OrphansLeftBecause)
	}
	raw(`,"components":{`)
	// encoding/json writes a map's keys sorted: so does this.
	for i, name := range slices.Sorted(maps.Keys(p.Components)) {
		if i > 0 {
			raw(",")
		}
		buf = jsonstr.Append(buf, name)
		buf = append(buf, ':')
		buf = appendComponentJSON(buf, p.Components[name])
		flush(false)
	}
	raw("}}\n")
	flush(true)
	return err
}
