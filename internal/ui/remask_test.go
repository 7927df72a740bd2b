package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/secret"
)

// A run folder masked again: the texts steps wrote lose the secret, and
// nothing else changes — not a component called like it, not times, not
// numbers (a short numeric secret would break the JSON).
func TestRemaskRunFolder(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"postgres.log": "2026-12-01T09:00:29.075Z ==> deploy postgres\n2026-12-01T09:00:29.076Z token Tok3nValue and postgres\n",
		"events.jsonl": `{"time":"2026-12-01T09:00:29.076Z","event":"log","step":"postgres/deploy","component":"postgres","line":"token Tok3nValue and postgres"}` + "\n" +
			`{"time":"2026-12-01T09:00:29.080Z","event":"step_finished","step":"postgres/deploy","status":"failed","duration_ms":2026,"reason":"saw \"Tok3nValue\""}` + "\n",
		"plan.json": `{"nodes":[{"id":"postgres/deploy","label":"Tok3nValue"}]}`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := secret.NewMasker("Tok3nValue", "postgres", "2026")
	if err := RemaskRunFolder(dir, m.Text); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	log := read("postgres.log")
	if want := "2026-12-01T09:00:29.075Z ==> deploy *****\n2026-12-01T09:00:29.076Z token ***** and *****\n"; log != want {
		t.Errorf("log:\n%s\nwant:\n%s", log, want)
	}
	events := read("events.jsonl")
	for i, l := range strings.Split(strings.TrimSpace(events), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("event %d is no JSON any more: %v\n%s", i, err, l)
		}
		if ev["step"] != "postgres/deploy" || !strings.HasPrefix(ev["time"].(string), "2026-") {
			t.Errorf("event %d: ids or times changed: %s", i, l)
		}
	}
	if strings.Contains(events, "Tok3nValue") || !strings.Contains(events, `"duration_ms":2026`) || !strings.Contains(events, `"line":"token ***** and *****"`) {
		t.Errorf("events:\n%s", events)
	}
	if read("plan.json") != files["plan.json"] {
		t.Errorf("plan.json was changed: %s", read("plan.json"))
	}
}
