package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/bench/casegen"
	"github.com/gantry-dev/gantry/internal/cli"
)

// BenchmarkPlan10k is gantry plan of a 10,000-component stack (random DAG,
// bench/'s case): elaborate, lock the parameters, build and print the plan,
// in process (target: under 1 s; bench/run.sh measures the binary's peak
// memory).
func BenchmarkPlan10k(b *testing.B) {
	dir := b.TempDir()
	if _, err := casegen.Generate(dir, "random", 10000, 1, "noop"); err != nil {
		b.Fatal(err)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(dir); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var stderr bytes.Buffer
		if code := cli.Main(context.Background(), []string{"plan", "hub.yaml"}, nil, io.Discard, &stderr); code != 0 {
			b.Fatalf("plan exited %d: %s", code, stderr.String())
		}
	}
	b.StopTimer()
	if _, err := os.Stat(filepath.Join(dir, "hub.yaml.state")); err == nil {
		b.Fatal("plan wrote a state")
	}
}
