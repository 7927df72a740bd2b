package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"

	"github.com/gantry-dev/gantry/bench/casegen"
	"github.com/gantry-dev/gantry/internal/cli"
)

// BenchmarkPlan10k is gantry plan of a 10,000-component stack (random DAG,
// bench/'s case): elaborate, lock the parameters, build and print the plan,
// in process (target: under 1 s; bench/run.sh measures the binary's peak
// memory).
func BenchmarkPlan10k(b *testing.B) {
	dir := inRandomCase(b, 10000)
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

// BenchmarkResume10k is gantry deploy --resume of a deployed, unchanged
// 10,000-component stack (random DAG, bench/'s case), in process: every
// component is found unchanged and nothing runs (target: under 0.5 s;
// bench/run.sh measures the binary, resume-random-10000). Each iteration
// starts from the state the deploy left.
func BenchmarkResume10k(b *testing.B) {
	inRandomCase(b, 10000)
	run := func(args ...string) {
		b.Helper()
		var stderr bytes.Buffer
		if code := cli.Main(context.Background(), args, nil, io.Discard, &stderr); code != 0 {
			b.Fatalf("%v exited %d: %s", args, code, stderr.String())
		}
	}
	run("deploy", "--parallel", "8", "hub.yaml")
	deployed, err := os.ReadFile("hub.yaml.state")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := os.WriteFile("hub.yaml.state", deployed, 0o600); err != nil {
			b.Fatal(err)
		}
		os.Remove("hub.yaml.state.journal")
		b.StartTimer()
		// The label tells the resumes apart from the deploy in a profile:
		// go tool pprof -tagfocus phase=resume.
		pprof.Do(context.Background(), pprof.Labels("phase", "resume"), func(context.Context) {
			run("deploy", "--resume", "--parallel", "8", "hub.yaml")
		})
	}
}

// inRandomCase generates bench/'s no-op random case of n components in a
// folder of the benchmark's, and makes it the working directory until the
// benchmark ends.
func inRandomCase(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	if _, err := casegen.Generate(dir, "random", n, 1, "noop"); err != nil {
		b.Fatal(err)
	}
	b.Chdir(dir)
	return dir
}
