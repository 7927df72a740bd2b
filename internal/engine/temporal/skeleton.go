package temporal

import (
	"encoding/json"
	"fmt"

	"github.com/gantry-dev/gantry/internal/plan"
)

// SkeletonOf is the skeleton of a plan; rerun says which steps may run
// again on another worker after the one running them died, local which
// light steps may run in the workflow's worker.
func SkeletonOf(p *plan.Plan, rerun, local func(*plan.Node) bool) (Skeleton, error) {
	sk := Skeleton{Nodes: make([]Node, len(p.Nodes)), Edges: make([]Edge, len(p.Edges))}
	for i, n := range p.Nodes {
		spec, err := json.Marshal(n.Spec)
		if err != nil {
			return Skeleton{}, fmt.Errorf("step %s: its spec cannot be sent to workers: %w", n.ID, err)
		}
		sk.Nodes[i] = Node{ID: n.ID, Kind: n.Kind, Label: n.Label, Component: n.Component, Group: n.Group,
			Light: n.Light, Critical: n.Critical, Always: n.Always, Takes: n.Takes, Frees: n.Frees, Inputs: n.Inputs,
			Rerun: rerun(n), Local: n.Light && local(n), Spec: spec}
	}
	for i, e := range p.Edges {
		sk.Edges[i] = Edge{From: p.Node(e.From).Index(), To: p.Node(e.To).Index(), Kind: e.Kind}
	}
	return sk, nil
}

// skelSpec stands for a step's spec in the workflow's plan: the scheduler
// reads no spec.
type skelSpec struct{ kind plan.Kind }

func (s skelSpec) Kind() plan.Kind { return s.kind }

// Plan rebuilds the plan the scheduler walks: the same steps in the same
// order, the same edges.
func (sk Skeleton) Plan(stack string) (*plan.Plan, error) {
	p := plan.New(stack, plan.VerbDeploy)
	for _, n := range sk.Nodes {
		if n.ID == "" || p.Node(n.ID) != nil {
			return nil, fmt.Errorf("the plan's step id %q is empty or repeated", n.ID)
		}
		p.Add(&plan.Node{ID: n.ID, Kind: n.Kind, Label: n.Label, Component: n.Component, Group: n.Group,
			Light: n.Light, Critical: n.Critical, Always: n.Always, Takes: n.Takes, Frees: n.Frees, Inputs: n.Inputs,
			Spec: skelSpec{n.Kind}})
	}
	for _, e := range sk.Edges {
		if e.From < 0 || e.From >= len(sk.Nodes) || e.To < 0 || e.To >= len(sk.Nodes) {
			return nil, fmt.Errorf("the plan has an edge between steps %d and %d of %d", e.From, e.To, len(sk.Nodes))
		}
		if err := p.Connect(sk.Nodes[e.From].ID, sk.Nodes[e.To].ID, e.Kind); err != nil {
			return nil, err
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}
