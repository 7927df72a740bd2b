package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRunPhases(t *testing.T) {
	began := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
	ended := began.Add(900 * time.Millisecond)
	at := func(ms int) string { return began.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano) }
	ev := func(ms int, event, kind string) string {
		return `{"time":"` + at(ms) + `","event":"` + event + `","step":"s","kind":"` + kind + `"}` + "\n"
	}
	tests := []struct {
		name       string
		output     string
		events     string
		lead, tail time.Duration
		ok         bool
	}{
		{
			name:   "first start and last end of component steps",
			output: "[a] deploy a\ntotal: 2 deployed\n\nlogs: .gantry/runs/r1\nreport: .gantry/runs/r1/report.html\n",
			events: `{"time":"` + at(40) + `","event":"run_started","components":[{"name":"a","kind":"component"}]}` + "\n" +
				ev(50, "step_started", "begin") + ev(60, "step_started", "component") + ev(55, "step_started", "component") +
				ev(700, "step_finished", "component") + ev(650, "step_finished", "component") + ev(710, "step_finished", "end") +
				`{"time":"` + at(720) + `","event":"run_finished"}` + "\n",
			lead: 55 * time.Millisecond, tail: 200 * time.Millisecond, ok: true,
		},
		{
			name:   "no run folder named",
			output: "total: 0 deployed\n",
			events: ev(60, "step_started", "component") + ev(700, "step_finished", "component"),
		},
		{
			name:   "no component step",
			output: "logs: .gantry/runs/r1\n",
			events: ev(50, "step_started", "begin") + ev(710, "step_finished", "end"),
		},
		{
			name:   "no step finished",
			output: "logs: .gantry/runs/r1\n",
			events: ev(60, "step_started", "component"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			runs := filepath.Join(dir, ".gantry", "runs", "r1")
			if err := os.MkdirAll(runs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(runs, "events.jsonl"), []byte(tt.events), 0o644); err != nil {
				t.Fatal(err)
			}
			output := filepath.Join(dir, "output.log")
			if err := os.WriteFile(output, []byte(tt.output), 0o644); err != nil {
				t.Fatal(err)
			}
			lead, tail, ok := runPhases(dir, output, began, ended)
			if ok != tt.ok || lead != tt.lead || tail != tt.tail {
				t.Errorf("runPhases = %v, %v, %v; want %v, %v, %v", lead, tail, ok, tt.lead, tt.tail, tt.ok)
			}
		})
	}
}
