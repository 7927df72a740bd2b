package action

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/bench/casegen"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
)

// benchStack writes bench/'s random no-op case of n components (each after
// up to three earlier ones, as bench/run.sh deploys it) and returns its
// hub.yaml.
func benchStack(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	if _, err := casegen.Generate(dir, "random", n, 1, "noop"); err != nil {
		b.Fatal(err)
	}
	return filepath.Join(dir, "hub.yaml")
}

// BenchmarkLoad measures what a deploy does before its plan: reading and
// elaborating the stack (no state yet). It is the first part of the lead
// before a run's first component (bench/README.md, "The fixed part"). After
// the first iteration the stack's parse comes from the parse cache, as in a
// deploy after the first (GANTRY_PARSE_CACHE=off measures it without).
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := Source{Manifest: benchStack(b, n)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(src, "nothing was run"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlanBuild measures a fresh deploy's plan of a loaded stack: the
// facts resolved and the plan built, the second part of the lead. The
// elaborated file a deploy also encodes meanwhile, on another goroutine,
// is left out.
func BenchmarkPlanBuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st, err := Load(Source{Manifest: benchStack(b, n)}, "nothing was run")
			if err != nil {
				b.Fatal(err)
			}
			pl := newPlanner(st, nil, "nothing was run")
			if err := st.LockParams(Terminal{}, false, pl.warnOnce, "nothing was run"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				built, err := pl.build(build.Options{Verb: plan.VerbDeploy, Run: true},
					resolve.Options{Verbs: []string{plan.VerbDeploy}})
				if err != nil {
					b.Fatal(err)
				}
				if got := len(built.plan.Nodes); got < 3*n {
					b.Fatalf("the plan has %d steps for %d components", got, n)
				}
			}
		})
	}
}
