package landscape

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/mandelsoft/spiff/dynaml"
	"github.com/mandelsoft/spiff/spiffing"
)

// Doc is a YAML (or JSON) document given to spiff: Name is its file (spiff's
// __ctx.DIR and messages use it), Data its text.
type Doc struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// Job is one spiff evaluation: the template processed with the stubs, in
// spiff's order (the first stub wins), and the last state appended as the
// last stub, as `spiff merge --state` does.
type Job struct {
	Template Doc   `json:"template"`
	Stubs    []Doc `json:"stubs,omitempty"`
	// State is the last state (&state nodes), nil for none; WantState asks
	// for the new state of the result.
	State     *Doc `json:"state,omitempty"`
	WantState bool `json:"wantState,omitempty"`
}

// Result is what a Job produced: the document as JSON, its new state as
// YAML (when asked for and there is one), or the problems.
type Result struct {
	JSON   json.RawMessage `json:"json,omitempty"`
	State  []byte          `json:"state,omitempty"`
	Issues []Issue         `json:"issues,omitempty"`
}

// Issue is one problem spiff found: the file and the node path where it
// gives them, and the message.
type Issue struct {
	File string   `json:"file,omitempty"`
	Path []string `json:"path,omitempty"`
	Msg  string   `json:"msg"`
}

// Value decodes the result's document.
func (r *Result) Value() (any, error) {
	var v any
	if len(r.JSON) == 0 {
		return map[string]any{}, nil
	}
	if err := json.Unmarshal(r.JSON, &v); err != nil {
		return nil, fmt.Errorf("decode spiff's result: %w", err)
	}
	if v == nil {
		v = map[string]any{}
	}
	return v, nil
}

// evaluate runs a job with spiff in this process. spiff's panics (a nil
// state node panics, among others) become issues: a template must never
// crash gantry.
func evaluate(j Job) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{Issues: []Issue{{File: j.Template.Name, Msg: fmt.Sprintf("spiff failed on this input (a bug in spiff: %v)", r)}}}
			if debugPanics {
				res.Issues[0].Msg += "\n" + string(debug.Stack())
			}
		}
	}()
	s := spiffing.New()
	tmpl, err := s.Unmarshal(j.Template.Name, j.Template.Data)
	if err != nil {
		return Result{Issues: []Issue{{File: j.Template.Name, Msg: "not valid YAML: " + err.Error()}}}
	}
	var stubs, states []spiffing.Node
	for _, d := range j.Stubs {
		n, err := s.Unmarshal(d.Name, d.Data)
		if err != nil {
			return Result{Issues: []Issue{{File: d.Name, Msg: "not valid YAML: " + err.Error()}}}
		}
		stubs = append(stubs, n)
	}
	if j.State != nil && len(strings.TrimSpace(string(j.State.Data))) > 0 {
		n, err := s.Unmarshal(j.State.Name, j.State.Data)
		if err != nil {
			return Result{Issues: []Issue{{File: j.State.Name, Msg: "not valid YAML: " + err.Error()}}}
		}
		if n != nil && n.Value() != nil {
			states = append(states, n)
		}
	}
	out, err := s.Cascade(tmpl, stubs, states...)
	if err != nil {
		return Result{Issues: issuesOf(j.Template.Name, err)}
	}
	if j.WantState {
		if st := s.DetermineState(out); st != nil && st.Value() != nil {
			if res.State, err = s.Marshal(st); err != nil {
				return Result{Issues: []Issue{{File: j.Template.Name, Msg: "encode the state: " + err.Error()}}}
			}
		}
	}
	v, err := s.Normalize(out)
	if err != nil {
		return Result{Issues: []Issue{{File: j.Template.Name, Msg: "the result cannot be represented: " + err.Error()}}}
	}
	if res.JSON, err = json.Marshal(v); err != nil {
		return Result{Issues: []Issue{{File: j.Template.Name, Msg: "the result cannot be represented as JSON: " + err.Error()}}}
	}
	return res
}

// debugPanics adds the stack to a panic's issue (tests of spiff's bugs).
var debugPanics = false

// issuesOf turns spiff's error into issues, one per unresolved node with
// its file and path where spiff names them.
func issuesOf(template string, err error) []Issue {
	var un dynaml.UnresolvedNodes
	if errors.As(err, &un) && len(un.Nodes) > 0 {
		out := make([]Issue, 0, len(un.Nodes))
		for _, n := range un.Nodes {
			msg := n.Issue().Issue
			if msg == "" {
				if e, ok := n.Value().(dynaml.Expression); ok {
					msg = fmt.Sprintf("(( %s )) could not be evaluated", e)
				} else {
					msg = "could not be evaluated"
				}
			} else if e, ok := n.Value().(dynaml.Expression); ok {
				msg = fmt.Sprintf("(( %s )): %s", e, msg)
			}
			for _, sub := range n.Issue().Nested {
				msg += "; " + sub.Issue
			}
			file := n.SourceName()
			if file == "" {
				file = template
			}
			path := n.Path
			if len(path) == 0 {
				path = n.Context
			}
			out = append(out, Issue{File: file, Path: append([]string(nil), path...), Msg: msg})
		}
		return out
	}
	return []Issue{{File: template, Msg: strings.TrimSpace(err.Error())}}
}
