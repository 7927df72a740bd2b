package state

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// stateOf1000 is a state with 1,000 deployed components, each with a few
// parameters and outputs: about the size a 1,000-component stack writes.
func stateOf1000() *State {
	s := New("bench")
	started := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 1000; i++ {
		c := s.Component(fmt.Sprintf("n%05d", i))
		c.Status, c.Verb, c.Started, c.Finished, c.LastRun, c.Order = StatusDeployed, "deploy", started, started.Add(time.Second), "run", i
		c.Dir = "components/n"
		c.Parameters = []Parameter{{Name: "region", Value: "eu-west-1", Env: "REGION"}, {Name: "size", Value: "3"}}
		c.Outputs = map[string]string{"url": fmt.Sprintf("http://n%05d.local:8080", i)}
		c.Fingerprint = "d02da7a732ff227271344e6615392f66"
	}
	return s
}

// BenchmarkCheckpoint is the cost of one durable state write after a step
// (the in-flight mark a component waits for before its process starts), in
// a 1,000-component state: encode what changed, write, fsync, rename.
func BenchmarkCheckpoint(b *testing.B) {
	r := NewRecorder(filepath.Join(b.TempDir(), "hub.yaml.state"), stateOf1000())
	defer r.Close()
	if err := r.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := r.UpdateComponent(fmt.Sprintf("n%05d", i%1000), func(c *Component) { c.Status = StatusIncomplete })
		if err := r.Wait(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckpointParallel is the same with 8 steps checkpointing at once:
// group commit shares writes between them, so a checkpoint costs less than a
// write.
func BenchmarkCheckpointParallel(b *testing.B) {
	r := NewRecorder(filepath.Join(b.TempDir(), "hub.yaml.state"), stateOf1000())
	defer r.Close()
	if err := r.Flush(); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.SetParallelism(4) // 2 CPUs × 4 = 8 goroutines on the benchmark machine
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			v := r.UpdateComponent(fmt.Sprintf("n%05d", i%1000), func(c *Component) { c.Status = StatusIncomplete })
			if err := r.Wait(v); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkDecodeSlowPath is the cost of reading a 1,000-component state
// as one the fast decoder does not take (a hand edit) is read: by goccy,
// with the times read strictly from the same tree. Read with a custom
// unmarshaler per time, as before, it took 14 s: goccy formats the whole
// document for each.
func BenchmarkDecodeSlowPath(b *testing.B) {
	data, err := Encode(stateOf1000())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := decodeYAML(data); err != nil {
			b.Fatal(err)
		}
	}
}
