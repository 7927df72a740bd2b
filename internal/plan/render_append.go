package plan

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/gantry-dev/gantry/internal/jsonstr"
)

// The run folder's plan.json holds a node and a component for each of up to
// 10,000 components: encoding them by reflection cost more CPU than the
// rest of a --resume's record. These append exactly what encoding/json
// writes for them (TestAppendLikeEncodingJSON keeps it so, field by field).

// appendComponentJSON appends c as encoding/json encodes a *Component.
func appendComponentJSON(b []byte, c *Component) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"name":`...)
	b = jsonstr.Append(b, c.Name)
	b = append(b, `,"verb":`...)
	b = jsonstr.Append(b, c.Verb)
	b = append(b, `,"action":`...)
	b = jsonstr.Append(b, c.Action)
	b = jsonstr.AppendField(b, "reason", c.Reason)
	if c.Change != nil {
		b = append(b, `,"change":{"status":`...)
		b = jsonstr.Append(b, c.Change.Status)
		if len(c.Change.Details) > 0 {
			b = append(b, `,"details":[`...)
			for i, d := range c.Change.Details {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"kind":`...)
				b = jsonstr.Append(b, d.Kind)
				b = jsonstr.AppendField(b, "name", d.Name)
				b = append(b, `,"what":`...)
				b = jsonstr.Append(b, d.What)
				b = jsonstr.AppendField(b, "old", d.Old)
				b = jsonstr.AppendField(b, "new", d.New)
				b = jsonstr.AppendField(b, "pending", d.Pending)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = appendOptStrings(b, "fingerprintExclude", c.FingerprintExclude)
	b = appendOptStrings(b, "fingerprintReads", c.FingerprintReads)
	b = jsonstr.AppendField(b, "entryLifecycle", c.EntryLifecycle)
	b = append(b, `,"dir":`...)
	b = jsonstr.Append(b, c.Dir)
	b = appendOptStrings(b, "after", c.After)
	b = appendOptStrings(b, "depends", c.Depends)
	if len(c.Links) > 0 {
		b = append(b, `,"links":{`...)
		for i, k := range slices.Sorted(maps.Keys(c.Links)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			if c.Links[k] == nil {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '[')
			for j, l := range c.Links[k] {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"kind":`...)
				b = jsonstr.Append(b, l.Kind)
				b = jsonstr.AppendField(b, "what", l.What)
				b = appendOptBool(b, "maybe", l.Maybe)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `,"order":`...)
	b = strconv.AppendInt(b, int64(c.Order), 10)
	b = jsonstr.AppendField(b, "up", c.Up)
	b = appendOptBool(b, "fromState", c.FromState)
	b = appendOptBool(b, "orphan", c.Orphan)
	b = appendOptBool(b, "readOnly", c.ReadOnly)
	b = appendOptBool(b, "resume", c.Resume)
	b = appendOptBool(b, "forceReplace", c.ForceReplace)
	b = appendOptBool(b, "settled", c.Settled)
	b = appendOptBool(b, "idempotent", c.Idempotent)
	b = appendOptStrings(b, "implementation", c.Implementation)
	b = appendOptBool(b, "plugins", c.Plugins)
	b = jsonstr.AppendField(b, "lists", c.Lists)
	b = jsonstr.AppendField(b, "productDir", c.ProductDir)
	b = jsonstr.AppendField(b, "specVersion", c.SpecVersion)
	b = jsonstr.AppendField(b, "deployedVersion", c.DeployedVersion)
	b = appendOptStrings(b, "templates", c.Templates)
	b = appendOptStrings(b, "droppedRequires", c.DroppedRequires)
	return append(b, '}')
}

// appendNodeJSON appends n as encoding/json encodes a jsonNode; its spec by
// reflection but for a settled component's (one per unchanged component).
func appendNodeJSON(b []byte, n *Node) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, n.ID)
	b = append(b, `,"kind":`...)
	b = jsonstr.Append(b, string(n.Kind))
	b = append(b, `,"label":`...)
	b = jsonstr.Append(b, n.Label)
	b = jsonstr.AppendField(b, "component", n.Component)
	b = jsonstr.AppendField(b, "group", n.Group)
	b = jsonstr.AppendField(b, "point", n.Point)
	b = jsonstr.AppendField(b, "action", n.Action)
	b = jsonstr.AppendField(b, "reason", n.Reason)
	b = jsonstr.AppendField(b, "lane", n.Lane)
	b = appendOptBool(b, "hidden", n.Hidden)
	b = appendOptBool(b, "quiet", n.Quiet)
	b = appendOptBool(b, "critical", n.Critical)
	b = appendOptBool(b, "always", n.Always)
	b = appendOptStrings(b, "inputs", n.Inputs)
	b = appendOptStrings(b, "takes", n.Takes)
	b = appendOptStrings(b, "frees", n.Frees)
	b = append(b, `,"spec":`...)
	switch s := n.Spec.(type) {
	case Unchanged:
		b = append(b, `{"component":`...)
		b = jsonstr.Append(b, s.Component)
		b = append(b, `,"verb":`...)
		b = jsonstr.Append(b, s.Verb)
		b = append(b, '}')
	default:
		spec, err := json.Marshal(n.Spec)
		if err != nil {
			return b, err
		}
		b = append(b, spec...)
	}
	return append(b, '}'), nil
}

func appendOptBool(b []byte, key string, v bool) []byte {
	if !v {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, `":true`...)
}

// appendOptStrings appends a []string field with omitempty: left out when
// empty (nil or not), as encoding/json does.
func appendOptStrings(b []byte, key string, l []string) []byte {
	if len(l) == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':', '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, s)
	}
	return append(b, ']')
}
