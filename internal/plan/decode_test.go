package plan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadJSONRoundTrip: a plan written as a run's folder keeps it reads
// back with the same steps, edges and components, its specs as saved.
func TestReadJSONRoundTrip(t *testing.T) {
	p := compPlan(t, VerbDeploy, []string{"db", "app"}, map[string][]string{"app": {"db"}}, map[string]bool{"db": true}, map[string][]string{"app": {"probe"}})
	p.Components["app"].Links = map[string][]Link{"db": {{Kind: LinkOutput, What: "db.host"}}}
	p.Orphans = []string{"old", "older"}
	p.OrphanDependents = map[string][]string{"older": {"old"}}
	for _, indent := range []bool{true, false} {
		var b bytes.Buffer
		if err := p.EncodeJSON(&b, indent); err != nil {
			t.Fatal(err)
		}
		q, err := ReadJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		if q.Stack != p.Stack || q.Verb != p.Verb || !cmp.Equal(q.Orphans, p.Orphans) || !cmp.Equal(q.OrphanDependents, p.OrphanDependents) {
			t.Errorf("read %s %s %v %v, want %s %s %v %v", q.Verb, q.Stack, q.Orphans, q.OrphanDependents, p.Verb, p.Stack, p.Orphans, p.OrphanDependents)
		}
		if len(q.Nodes) != len(p.Nodes) || len(q.Edges) != len(p.Edges) {
			t.Fatalf("read %d steps and %d edges, want %d and %d", len(q.Nodes), len(q.Edges), len(p.Nodes), len(p.Edges))
		}
		for i, n := range p.Nodes {
			r := q.Nodes[i]
			if r.ID != n.ID || r.Kind != n.Kind || r.Label != n.Label || r.Hidden != n.Hidden || r.Critical != n.Critical || r.Point != n.Point {
				t.Errorf("step %d: read %+v, want %+v", i, r, n)
			}
			if r.Spec == nil || r.Spec.Kind() != n.Kind {
				t.Errorf("step %s: spec %v, want one of kind %s", n.ID, r.Spec, n.Kind)
			}
		}
		if diff := cmp.Diff(p.Edges, q.Edges); diff != "" {
			t.Errorf("edges (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(p.Components, q.Components); diff != "" {
			t.Errorf("components (-want +got):\n%s", diff)
		}
		// Written again, it is the same document.
		var again, first bytes.Buffer
		if err := q.EncodeJSON(&again, indent); err != nil {
			t.Fatal(err)
		}
		_ = p.EncodeJSON(&first, indent)
		if first.String() != again.String() {
			t.Errorf("written again, the plan differs:\n%s\nwant:\n%s", again.String(), first.String())
		}
	}
}

func TestReadJSONRefusesBrokenPlans(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not JSON", `{"stack":`, "read a saved plan"},
		{"a repeated step", `{"nodes":[{"id":"a","kind":"exec"},{"id":"a","kind":"exec"}]}`, `step id "a" is empty or repeated`},
		{"an edge to nowhere", `{"nodes":[{"id":"a","kind":"exec"}],"edges":[{"from":"a","to":"b","kind":"success"}]}`, "unknown steps"},
		{"a cycle", `{"nodes":[{"id":"a","kind":"exec"},{"id":"b","kind":"exec"}],"edges":[{"from":"a","to":"b","kind":"success"},{"from":"b","to":"a","kind":"failure"}]}`, "cycle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadJSON: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
