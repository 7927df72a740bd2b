// Package casegen writes benchmark cases: a DAG of a given shape and size as a
// gantry stack and as a Makefile with exactly the same DAG and the same
// process per node, so that gantry and GNU make -j run the same work side by
// side.
//
// Shapes: chain (a line), fanout (1 → N-2 → 1), lattice (√N×√N, each node
// after its left and upper neighbours), random (each node after up to 3
// earlier ones, average out-degree close to 3). Work: noop (each node runs
// true) or sleep (each node sleeps 50–200 ms, drawn from the seed).
package casegen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

// Case describes a generated case (also written as meta.json).
type Case struct {
	Shape string `json:"shape"`
	N     int    `json:"n"`
	Work  string `json:"work"`
	Seed  int64  `json:"seed"`
	Edges int    `json:"edges"`
	// CriticalPath is the longest chain of work, in seconds: no scheduler can
	// finish faster with enough slots.
	CriticalPath float64 `json:"critical_path_s"`
	// TotalWork is the sum of all nodes' work, in seconds.
	TotalWork float64 `json:"total_work_s"`
}

// Shapes are the DAG shapes Generate knows.
var Shapes = []string{"chain", "fanout", "lattice", "random"}

// Generate writes the case into dir (hub.yaml, comp/, Makefile, meta.json).
func Generate(dir, shape string, n int, seed int64, work string) (Case, error) {
	if n < 2 {
		return Case{}, fmt.Errorf("a case needs at least 2 nodes, not %d", n)
	}
	deps, err := dag(shape, n, rand.New(rand.NewSource(seed)))
	if err != nil {
		return Case{}, err
	}
	durations := make([]float64, n)
	switch work {
	case "sleep":
		r := rand.New(rand.NewSource(seed + 1))
		for i := range durations {
			durations[i] = float64(50+r.Intn(151)) / 1000
		}
	case "noop":
	default:
		return Case{}, fmt.Errorf("work must be noop or sleep, not %q", work)
	}
	return write(dir, shape, work, seed, deps, durations)
}

// NodeName is the name of the i-th component of a case.
func NodeName(i int) string { return fmt.Sprintf("n%05d", i) }

// dag returns, for each node, the earlier nodes it depends on.
func dag(shape string, n int, r *rand.Rand) ([][]int, error) {
	deps := make([][]int, n)
	switch shape {
	case "chain":
		for i := 1; i < n; i++ {
			deps[i] = []int{i - 1}
		}
	case "fanout":
		for i := 1; i < n-1; i++ {
			deps[i] = []int{0}
		}
		for i := 1; i < n-1; i++ {
			deps[n-1] = append(deps[n-1], i)
		}
	case "lattice":
		side := int(math.Ceil(math.Sqrt(float64(n))))
		for i := 0; i < n; i++ {
			row, col := i/side, i%side
			if col > 0 {
				deps[i] = append(deps[i], i-1)
			}
			if row > 0 {
				deps[i] = append(deps[i], i-side)
			}
		}
	case "random":
		// Each node picks up to 3 distinct earlier nodes, so the average
		// out-degree is close to 3.
		for i := 1; i < n; i++ {
			seen := map[int]bool{}
			for k := 0; k < 3; k++ {
				j := r.Intn(i)
				if !seen[j] {
					seen[j] = true
					deps[i] = append(deps[i], j)
				}
			}
		}
	default:
		return nil, fmt.Errorf("unknown shape %q", shape)
	}
	return deps, nil
}

func write(out, shape, work string, seed int64, deps [][]int, durations []float64) (Case, error) {
	if err := os.MkdirAll(filepath.Join(out, "comp"), 0o755); err != nil {
		return Case{}, err
	}
	n := len(deps)
	// One component folder for all nodes, whose deploy both tools run the
	// same way: directly, no shell in between. With no work it is the true
	// binary itself; with sleep, a script reading its duration from the
	// environment (a parameter for gantry, a target-specific exported
	// variable for make).
	// Its undeploy does nothing, so that gantry can plan (and run) the
	// teardown of a deployed case.
	deploy := filepath.Join(out, "comp", "deploy")
	undeploy := filepath.Join(out, "comp", "undeploy")
	os.Remove(deploy)
	os.Remove(undeploy)
	truePath := "/bin/true"
	if _, err := os.Stat(truePath); err != nil {
		truePath = "/usr/bin/true"
	}
	if work == "noop" {
		if err := os.Symlink(truePath, deploy); err != nil {
			return Case{}, err
		}
	} else if err := os.WriteFile(deploy, []byte("#!/bin/sh\nexec sleep \"$DURATION\"\n"), 0o755); err != nil {
		return Case{}, err
	}
	if err := os.Symlink(truePath, undeploy); err != nil {
		return Case{}, err
	}
	comp := "version: 1\nkind: component\nmeta: {name: node}\n"
	if work == "sleep" {
		comp += "parameters:\n  - name: duration\n    env: DURATION\n"
	}
	if err := os.WriteFile(filepath.Join(out, "comp", "hub-component.yaml"), []byte(comp), 0o644); err != nil {
		return Case{}, err
	}
	var hub, mk strings.Builder
	fmt.Fprintf(&hub, "version: 1\nkind: stack\nmeta: {name: bench-%s-%d}\ncomponents:\n", shape, n)
	edges := 0
	all := make([]string, n)
	for i := 0; i < n; i++ {
		all[i] = NodeName(i)
		fmt.Fprintf(&hub, "  - name: %s\n    source: {dir: comp}\n", NodeName(i))
		var ds []string
		for _, j := range deps[i] {
			ds = append(ds, NodeName(j))
		}
		edges += len(ds)
		if len(ds) > 0 {
			fmt.Fprintf(&hub, "    depends: [%s]\n", strings.Join(ds, ", "))
		}
		if work == "sleep" {
			fmt.Fprintf(&mk, "%s: export DURATION = %.3f\n", NodeName(i), durations[i])
		}
		fmt.Fprintf(&mk, "%s: %s\n\t@comp/deploy\n", NodeName(i), strings.Join(ds, " "))
	}
	if work == "sleep" {
		hub.WriteString("parameters:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&hub, "  - name: duration\n    component: %s\n    value: %.3f\n", NodeName(i), durations[i])
		}
	}
	makefile := ".PHONY: all " + strings.Join(all, " ") + "\nall: " + strings.Join(all, " ") + "\n" + mk.String()
	if err := os.WriteFile(filepath.Join(out, "hub.yaml"), []byte(hub.String()), 0o644); err != nil {
		return Case{}, err
	}
	if err := os.WriteFile(filepath.Join(out, "Makefile"), []byte(makefile), 0o644); err != nil {
		return Case{}, err
	}
	finish := make([]float64, n)
	crit, total := 0.0, 0.0
	for i := 0; i < n; i++ {
		start := 0.0
		for _, j := range deps[i] {
			start = math.Max(start, finish[j])
		}
		finish[i] = start + durations[i]
		crit = math.Max(crit, finish[i])
		total += durations[i]
	}
	c := Case{Shape: shape, N: n, Work: work, Seed: seed, Edges: edges, CriticalPath: crit, TotalWork: total}
	meta, _ := json.MarshalIndent(c, "", "  ")
	return c, os.WriteFile(filepath.Join(out, "meta.json"), append(meta, '\n'), 0o644)
}
