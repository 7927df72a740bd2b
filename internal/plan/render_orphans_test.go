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
