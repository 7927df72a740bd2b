package stepvars

import (
	"strings"
	"testing"
)

// TestApplyBounded: a step's template that would render more than a
// component template may is refused with the bound's message, not rendered
// (before, a recursion in a step's argument hung validate or ran gantry out
// of memory); ordinary ones render, and an unknown variable lists the known.
func TestApplyBounded(t *testing.T) {
	leaf := strings.Repeat("y", 4<<20)
	bomb := `{{define "x"}}{{if .}}{{template "x" (slice . 1)}}{{template "x" (slice . 1)}}{{else}}` + leaf + `{{end}}{{end}}{{template "x" "xxxxx"}}`
	if _, err := Apply(bomb, map[string]any{}); err == nil || !strings.Contains(err.Error(), "renders more than") {
		t.Errorf("Apply(bomb) = %.200v, want the rendered bound", err)
	}
	vars := map[string]any{"component": "db", "project": "shop"}
	if got, err := Apply("{{.project}}-{{.component}}", vars); err != nil || got != "shop-db" {
		t.Errorf("Apply = %q, %v; want shop-db", got, err)
	}
	if _, err := Apply("{{.imagee}}", vars); err == nil || !strings.Contains(err.Error(), "unknown variable .imagee") || !strings.Contains(err.Error(), ".component, .project") {
		t.Errorf("Apply(.imagee) = %v, want unknown variable listing the known ones", err)
	}
}
