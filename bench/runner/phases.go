package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A fresh deploy of gantry has three phases: the lead, from its start to
// its first component's process (the binary's start, loading, planning,
// the lock, the run's records); the body, while component processes run;
// and the tail, from the last one's end to its exit (the state brought to
// rest, the summary, the report). The lead and the tail are a cost per run
// that grows with N (loading and planning 10,000 components), the body the
// cost per component: body/make tells them apart where the ratio alone
// does not. make's own start and ramp stay in make's time (65-90 ms at
// 1,000 and 10,000 components, fitted in bench/README.md's run 9), so at
// 1,000 body/make understates the body's cost per component against
// make's by a sixth to a fifth; at 10,000 by 2 %.

// runPhases reads a deploy's lead and tail from its run's events: the
// folder its output named ("logs: FOLDER", relative to dir), the time of
// the first component step's start and of the last one's end, against the
// wall-clock times the command began and ended. ok is false when the
// output names no folder or its events hold no component step.
func runPhases(dir, output string, began, ended time.Time) (lead, tail time.Duration, ok bool) {
	folder := logFolder(output)
	if folder == "" {
		return 0, 0, false
	}
	if !filepath.IsAbs(folder) {
		folder = filepath.Join(dir, folder)
	}
	f, err := os.Open(filepath.Join(folder, "events.jsonl"))
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	var first, last time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 64<<20) // run_started lists every component
	for sc.Scan() {
		line := sc.Bytes()
		// Only the steps of component processes; the run's own events,
		// the longest lines, are not decoded.
		if !bytes.Contains(line, []byte(`"kind":"component"`)) {
			continue
		}
		var ev struct {
			Time  time.Time `json:"time"`
			Event string    `json:"event"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch ev.Event {
		case "step_started":
			if first.IsZero() || ev.Time.Before(first) {
				first = ev.Time
			}
		case "step_finished":
			if ev.Time.After(last) {
				last = ev.Time
			}
		}
	}
	if sc.Err() != nil || first.IsZero() || last.IsZero() {
		return 0, 0, false
	}
	return first.Sub(began), ended.Sub(last), true
}

// logFolder is the run folder a deploy's output names: its last line
// starting with "logs: ".
func logFolder(output string) string {
	b, err := os.ReadFile(output)
	if err != nil {
		return ""
	}
	folder := ""
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "logs: "); ok {
			folder = strings.TrimSpace(rest)
		}
	}
	return folder
}
