package state

import (
	"fmt"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// yamlTimes are the times of a state document, read strictly from its
// syntax tree (strictTime): the stack's updated, and each component's
// started and finished, by the component's name as the decoder reads it.
type yamlTimes struct {
	updated    *time.Time
	components map[string]*componentTimes
}

type componentTimes struct{ started, finished *time.Time }

// stateTimes reads the times of a state document's body. One that is no
// time is an error at its place, as the decoder's own are ("[8:14] …").
// Shapes that are not the state's (components: a list) are left to the
// decoder to refuse.
func stateTimes(body ast.Node) (*yamlTimes, error) {
	out := &yamlTimes{components: map[string]*componentTimes{}}
	top, ok := body.(*ast.MappingNode)
	if !ok {
		return out, nil
	}
	for _, kv := range top.Values {
		switch keyText(kv.Key) {
		case "updated":
			t, err := nodeTime(kv.Value)
			if err != nil {
				return nil, err
			}
			out.updated = &t
		case "components":
			comps, ok := kv.Value.(*ast.MappingNode)
			if !ok {
				continue
			}
			for _, c := range comps.Values {
				fields, ok := c.Value.(*ast.MappingNode)
				if !ok {
					continue
				}
				var name string
				if err := yaml.NodeToValue(c.Key, &name); err != nil {
					continue // the decoder says what is wrong with it
				}
				ct := &componentTimes{}
				for _, f := range fields.Values {
					var dst **time.Time
					switch keyText(f.Key) {
					case "started":
						dst = &ct.started
					case "finished":
						dst = &ct.finished
					default:
						continue
					}
					t, err := nodeTime(f.Value)
					if err != nil {
						return nil, err
					}
					*dst = &t
				}
				out.components[name] = ct
			}
		}
	}
	return out, nil
}

// keyText is a mapping key's text, "" for a key that is no scalar.
func keyText(k ast.MapKeyNode) string {
	if k == nil {
		return ""
	}
	if s, ok := k.(ast.ScalarNode); ok {
		return fmt.Sprint(s.GetValue())
	}
	return ""
}

// nodeTime reads a time field's value: a scalar's text as strictTime
// takes it; anything else (a list, a tagged value) is no time.
func nodeTime(n ast.Node) (time.Time, error) {
	var t time.Time
	var text string
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return t, nil
	case *ast.StringNode:
		text = v.Value
	case ast.ScalarNode:
		if tk := v.GetToken(); tk != nil {
			text = tk.Value
		}
	default:
		text = n.String()
	}
	if err := strictTime(&t, text); err != nil {
		return t, placed(n, err)
	}
	return t, nil
}

// placed is an error at a node's place, as the decoder writes its own.
func placed(n ast.Node, err error) error {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return fmt.Errorf("[%d:%d] %w", tk.Position.Line, tk.Position.Column, err)
	}
	return err
}

// apply sets the times read on the decoded state.
func (y *yamlTimes) apply(s *State) {
	if y.updated != nil {
		s.Updated = *y.updated
	}
	for name, ct := range y.components {
		c := s.Components[name]
		if c == nil {
			continue
		}
		if ct.started != nil {
			c.Started = *ct.started
		}
		if ct.finished != nil {
			c.Finished = *ct.finished
		}
	}
}
