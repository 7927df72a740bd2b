package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// SavedSpec is the spec of a step read back from a saved plan: the JSON
// it was written as, for displays. The executor has no runner for it.
type SavedSpec struct {
	kind Kind
	JSON json.RawMessage
}

// Kind is the kind of the step the spec was saved for.
func (s SavedSpec) Kind() Kind { return s.kind }

// MarshalJSON writes the spec as it was saved.
func (s SavedSpec) MarshalJSON() ([]byte, error) {
	if len(s.JSON) == 0 {
		return []byte("null"), nil
	}
	return s.JSON, nil
}

// ReadJSON reads back a plan that WriteJSON or EncodeJSON wrote (the
// plan.json of a run's folder), for displays: its specs are SavedSpecs.
// Edges are checked as Connect checks them.
func ReadJSON(r io.Reader) (*Plan, error) {
	var in struct {
		Stack string `json:"stack"`
		Verb  string `json:"verb"`
		Nodes []struct {
			jsonNode
			Spec json.RawMessage `json:"spec"`
		} `json:"nodes"`
		Edges            []jsonEdge            `json:"edges"`
		Orphans          []string              `json:"orphans"`
		OrphansElsewhere []string              `json:"orphansElsewhere"`
		OrphanDependents map[string][]string   `json:"orphanDependents"`
		OrphansLeft      string                `json:"orphansLeftBecause"`
		Components       map[string]*Component `json:"components"`
	}
	if err := json.NewDecoder(r).Decode(&in); err != nil {
		return nil, fmt.Errorf("read a saved plan: %w", err)
	}
	p := New(in.Stack, in.Verb)
	p.Created = time.Time{} // not saved
	p.Orphans, p.OrphansElsewhere, p.OrphanDependents, p.OrphansLeftBecause = in.Orphans, in.OrphansElsewhere, in.OrphanDependents, in.OrphansLeft
	if in.Components != nil {
		p.Components = in.Components
	}
	for _, jn := range in.Nodes {
		if jn.ID == "" || p.index[jn.ID] != nil {
			return nil, fmt.Errorf("read a saved plan: step id %q is empty or repeated", jn.ID)
		}
		p.Add(&Node{ID: jn.ID, Kind: jn.Kind, Label: jn.Label, Component: jn.Component, Group: jn.Group, Point: jn.Point,
			Action: jn.Action, Reason: jn.Reason, Lane: jn.Lane, Hidden: jn.Hidden, Quiet: jn.Quiet, Critical: jn.Critical,
			Always: jn.Always, Inputs: jn.Inputs, Takes: jn.Takes, Frees: jn.Frees, Spec: SavedSpec{kind: jn.Kind, JSON: jn.Spec}})
	}
	for _, e := range in.Edges {
		kind := OnSuccess
		switch e.Kind {
		case "failure":
			kind = OnFailure
		case "complete":
			kind = OnComplete
		}
		if err := p.Connect(e.From, e.To, kind); err != nil {
			return nil, fmt.Errorf("read a saved plan: %w", err)
		}
	}
	return p, nil
}
