package plan

import (
	"strings"
	"testing"
)

// TestOrphanHintGivesTheStack: the undeploy commands suggested for orphans
// carry the stack as the plan was given it, each word quoted for the shell
// when it is not a plain word.
func TestOrphanHintGivesTheStack(t *testing.T) {
	tests := []struct {
		name  string
		stack []string
		want  string
	}{
		{"no stack given", nil, "gantry undeploy hub.yaml -c old"},
		{"params and state", []string{"v2.yaml", "params.yaml", "-s", "run.state"}, "gantry undeploy v2.yaml params.yaml -s run.state -c old"},
		{"words quoted", []string{"my stack/hub.yaml", "it's.yaml", "-s", "postgres://u:*****@h/db?sslmode=disable&x=1"},
			`gantry undeploy 'my stack/hub.yaml' 'it'\''s.yaml' -s 'postgres://u:*****@h/db?sslmode=disable&x=1' -c old`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New("s", VerbDeploy)
			p.Orphans = []string{"old"}
			var b strings.Builder
			if err := p.WriteText(&b, RenderOptions{Stack: tt.stack}); err != nil {
				t.Fatal(err)
			}
			if want := "  old: remove with " + tt.want + "\n"; !strings.Contains(b.String(), want) {
				t.Errorf("plan:\n%s\nlacks %q", b.String(), want)
			}
		})
	}
}

// TestOrphanHintForRecordsElsewhere: an orphan whose records are not in
// the stack's folder gets the command that forgets it, the others the
// plain undeploy, and "all of them" names only those.
func TestOrphanHintForRecordsElsewhere(t *testing.T) {
	p := New("s", VerbDeploy)
	p.Orphans, p.OrphansElsewhere = []string{"a", "b", "gone"}, []string{"gone"}
	var b strings.Builder
	if err := p.WriteText(&b, RenderOptions{Stack: []string{"."}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  a: remove with gantry undeploy . -c a\n",
		"  gone: its records are not in this folder: undeploy it from the folder it was deployed from, or forget it, deleting nothing, with gantry undeploy . --force -c gone\n",
		"  all of them: gantry undeploy . -c a,b\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan:\n%s\nlacks %q", b.String(), want)
		}
	}
}

// TestOrphanHintWithDependents: an orphan others depend on is suggested
// with them (alone it is refused), but not with one whose records are in
// another folder (refused from here): that one must be gone first, for it
// and for "all of them". A plan read back from its JSON suggests the same.
func TestOrphanHintWithDependents(t *testing.T) {
	p := New("s", VerbDeploy)
	p.Orphans, p.OrphansElsewhere = []string{"base", "mid", "top", "far"}, []string{"far"}
	p.OrphanDependents = map[string][]string{"base": {"mid", "far"}, "mid": {"top"}}
	var js strings.Builder
	if err := p.EncodeJSON(&js, false); err != nil {
		t.Fatal(err)
	}
	q, err := ReadJSON(strings.NewReader(js.String()))
	if err != nil {
		t.Fatal(err)
	}
	for name, plan := range map[string]*Plan{"built": p, "read back": q} {
		var b strings.Builder
		if err := plan.WriteText(&b, RenderOptions{Stack: []string{"."}}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"  base: remove with gantry undeploy . -c base,mid,top (mid, top depend on it), once far, which depends on it and whose records are not in this folder, is gone\n",
			"  mid: remove with gantry undeploy . -c mid,top (top depends on it)\n",
			"  top: remove with gantry undeploy . -c top\n",
			"  all of them: gantry undeploy . -c base,mid,top, once far is gone\n",
		} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s plan:\n%s\nlacks %q", name, b.String(), want)
			}
		}
	}
}
