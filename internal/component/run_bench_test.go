package component

import (
	"context"
	"io"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRun starts /bin/true the way a no-op component is started (its
// output into a writer that is not a file, stdin unset), eight at a time,
// and reports this process's CPU per start beside the wall time: what gantry
// adds to a process start is CPU that competes with the processes.
func BenchmarkRun(b *testing.B) {
	truePath := "/bin/true"
	if _, err := os.Stat(truePath); err != nil {
		b.Skip("no /bin/true")
	}
	env := Environ(os.Environ(), false, []string{"GANTRY_COMPONENT=bench"})
	ctx := context.Background()
	// Pointers: writers that compare equal when they are the same (a func
	// type cannot be compared, and would get a pipe each).
	out, errOut := &discardWriter{}, &discardWriter{}
	// A component's stdout goes to the capture of its outputs, its stderr
	// to its log: two writers, two pipes.
	b.Run("one-writer", func(b *testing.B) { benchmarkRun(b, ctx, truePath, env, out, out) })
	b.Run("two-writers", func(b *testing.B) { benchmarkRun(b, ctx, truePath, env, out, errOut) })
}

func benchmarkRun(b *testing.B, ctx context.Context, truePath string, env []string, out, errOut io.Writer) {
	before := selfCPU(b)
	b.ResetTimer()
	b.SetParallelism(4) // 8 on the 2-CPU machine bench/ measures on
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := Run(ctx, Process{Args: []string{truePath}, Env: env, Stdout: out, Stderr: errOut}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((selfCPU(b)-before).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// discardWriter takes everything, as a component's log would.
type discardWriter struct{ mu sync.Mutex }

func (w *discardWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(p), nil
}

// writerFunc is a writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// selfCPU is the CPU time this process has used (user and system), its
// children's not counted.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
