package landscape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

// Bounds of one spiff child process: its wall time, its heap and its
// stack. A template that loops or recurses without end ends with an error
// naming the bound, never a hung or crashed gantry.
var (
	// EvalTimeout bounds one child's work (GANTRY_SPIFF_TIMEOUT, seconds).
	EvalTimeout = 60 * time.Second
	// EvalMemory bounds the child's address space, bytes (virtual: Go
	// reserves far more than it uses, so the bound is generous).
	EvalMemory uint64 = 8 << 30
	// EvalStack bounds a goroutine's stack in the child, bytes: deep
	// recursion in a template stops here.
	EvalStack = 256 << 20
)

// childEnv marks this program as a spiff child: the package's init reads
// the request from stdin, answers on stdout and exits.
const childEnv = "GANTRY_SPIFF_CHILD"

func init() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	os.Exit(childMain(os.Stdin, os.Stdout))
}

// childMain serves one request: jobs on in, results on out.
func childMain(in io.Reader, out io.Writer) int {
	if v, err := strconv.Atoi(os.Getenv(childEnv + "_STACK")); err == nil && v > 0 {
		debug.SetMaxStack(v)
	}
	if v, err := strconv.ParseUint(os.Getenv(childEnv+"_MEMORY"), 10, 64); err == nil && v > 0 {
		// A soft limit makes the collector work harder first; the hard
		// limit on the address space ends the child.
		debug.SetMemoryLimit(int64(v / 2))
		_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: v, Max: v})
	}
	var jobs []Job
	if err := json.NewDecoder(in).Decode(&jobs); err != nil {
		fmt.Fprintln(os.Stderr, "gantry spiff child: bad request:", err)
		return 3
	}
	results := make([]Result, len(jobs))
	for i, j := range jobs {
		results[i] = evaluate(j)
	}
	if err := json.NewEncoder(out).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "gantry spiff child:", err)
		return 3
	}
	return 0
}

// Evaluate runs the jobs with spiff in a child process (this program,
// re-executed) within the bounds, and returns one result per job.
// evalInProcess short-cuts the child in fuzz tests, which cannot re-execute.
func Evaluate(ctx context.Context, jobs []Job) ([]Result, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	if evalInProcess {
		out := make([]Result, len(jobs))
		for i, j := range jobs {
			out[i] = evaluate(j)
		}
		return out, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find gantry's own program to run spiff: %w", err)
	}
	req, err := json.Marshal(jobs)
	if err != nil {
		return nil, fmt.Errorf("encode the spiff request: %w", err)
	}
	timeout := EvalTimeout
	if v, err := strconv.ParseFloat(os.Getenv("GANTRY_SPIFF_TIMEOUT"), 64); err == nil && v > 0 {
		timeout = time.Duration(v * float64(time.Second))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), childEnv+"=1",
		childEnv+"_STACK="+strconv.Itoa(EvalStack),
		childEnv+"_MEMORY="+strconv.FormatUint(EvalMemory, 10))
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &limited{w: &stderr, n: 4096}
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("spiff evaluation took longer than %s (a template that never ends?); stopped", timeout)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, childFailure(err, stderr.String())
	}
	var results []Result
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil || len(results) != len(jobs) {
		return nil, fmt.Errorf("spiff child answered %d bytes that are not %d results: %v", stdout.Len(), len(jobs), err)
	}
	return results, nil
}

// childFailure says why a child died: the bounds show in its last words.
func childFailure(err error, stderr string) error {
	switch {
	case bytes.Contains([]byte(stderr), []byte("stack exceeds")):
		return errors.New("spiff evaluation recursed too deep (a template calling itself without end?); stopped at the stack bound")
	case bytes.Contains([]byte(stderr), []byte("out of memory")) || bytes.Contains([]byte(stderr), []byte("cannot allocate memory")) ||
		bytes.Contains([]byte(stderr), []byte("pthread_create failed")):
		return errors.New("spiff evaluation needed more memory than its bound; stopped")
	}
	first := stderr
	if i := bytes.IndexByte([]byte(first), '\n'); i > 0 {
		first = first[:i]
	}
	return fmt.Errorf("spiff evaluation failed: %v: %s", err, first)
}

// evalInProcess evaluates without a child (fuzzing, where every input is
// bounded by the fuzzer itself).
var evalInProcess = false

// limited keeps the first n bytes written to it.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
