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
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds of a spiff child process: the time one request may take, its
// address space and its stack. A template that loops or recurses without
// end ends with an error naming the bound, never a hung or crashed gantry.
var (
	// EvalTimeout bounds one request (GANTRY_SPIFF_TIMEOUT, seconds).
	EvalTimeout = 60 * time.Second
	// EvalMemory bounds the child's address space, bytes (virtual: Go
	// reserves more than it uses, so the bound is generous; the heap
	// stays under about half of it). At 8 GiB one line of spiff,
	// [1..50000000], took 5 GB before the time bound stopped it.
	EvalMemory uint64 = 3 << 30
	// EvalStack bounds a goroutine's stack in the child, bytes: deep
	// recursion in a template stops here.
	EvalStack = 256 << 20
)

// childEnv marks this program as a spiff child: the package's init serves
// requests from stdin on stdout until stdin ends, then exits.
const childEnv = "GANTRY_SPIFF_CHILD"

// orphanCheck is how often a child looks whether gantry still runs.
const orphanCheck = 200 * time.Millisecond

func init() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	// Requests come on descriptor 3 and results go out on 4, not on stdin
	// and stdout: a template that reads /dev/stdin (spiff's read) or
	// writes /dev/stdout would take a request or break a result. Neither
	// is for the commands spiff runs.
	syscall.CloseOnExec(requestFD)
	syscall.CloseOnExec(resultFD)
	os.Exit(childMain(os.NewFile(requestFD, "spiff requests"), os.NewFile(resultFD, "spiff results")))
}

// The descriptors of a child's requests and results (cmd.ExtraFiles).
const (
	requestFD = 3
	resultFD  = 4
)

// childMain serves requests, one after another: a JSON array of jobs in,
// a JSON array of results out (one line each), until in ends.
func childMain(in io.Reader, out io.Writer) int {
	if v, err := strconv.Atoi(os.Getenv(childEnv + "_PARENT")); err == nil && v > 0 {
		go exitWhenOrphaned(v)
	}
	if v, err := strconv.Atoi(os.Getenv(childEnv + "_STACK")); err == nil && v > 0 {
		debug.SetMaxStack(v)
	}
	if v, err := strconv.ParseUint(os.Getenv(childEnv+"_MEMORY"), 10, 64); err == nil && v > 0 {
		// The hard limit on the address space ends the child; its soft
		// limit (GOMEMLIMIT, startChild) makes the collector work harder
		// first.
		_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: v, Max: v})
	}
	dec, enc := json.NewDecoder(in), json.NewEncoder(out)
	for {
		var jobs []Job
		if err := dec.Decode(&jobs); err == io.EOF {
			return 0
		} else if err != nil {
			fmt.Fprintln(os.Stderr, "gantry spiff child: bad request:", err)
			return 3
		}
		results := make([]Result, len(jobs))
		for i, j := range jobs {
			results[i] = evaluate(j)
		}
		if err := enc.Encode(results); err != nil {
			fmt.Fprintln(os.Stderr, "gantry spiff child:", err)
			return 3
		}
	}
}

// exitWhenOrphaned ends the child once gantry, its parent, is gone: a
// child busy with a template that never ends reads no end of its input,
// and must not outlive a gantry killed with -9. The kernel's parent-death
// signal (startChild) does it at once; this catches what that misses
// (it follows the thread that started the child, not the process).
func exitWhenOrphaned(parent int) {
	for ; ; time.Sleep(orphanCheck) {
		if os.Getppid() != parent {
			fmt.Fprintln(os.Stderr, "gantry spiff child: gantry ended; stopping")
			os.Exit(3)
		}
	}
}

// Evaluate runs the jobs with spiff in a child process (this program,
// re-executed) within the bounds, and returns one result per job.
// Children serve one request after another: a run evaluating hundreds of
// manifests starts a few processes, not hundreds.
func Evaluate(ctx context.Context, jobs []Job) ([]Result, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	req, err := json.Marshal(jobs)
	if err != nil {
		return nil, fmt.Errorf("encode the spiff request: %w", err)
	}
	timeout := EvalTimeout
	if v, err := strconv.ParseFloat(os.Getenv("GANTRY_SPIFF_TIMEOUT"), 64); err == nil && v > 0 {
		timeout = time.Duration(v * float64(time.Second))
	}
	c, err := children.get()
	if err != nil {
		return nil, err
	}
	results, err := c.serve(ctx, req, timeout)
	if err != nil {
		c.stop()
		if errors.Is(err, errTooLong) {
			return nil, fmt.Errorf("spiff evaluation of %s took longer than %s (a template that never ends? GANTRY_SPIFF_TIMEOUT sets the bound, in seconds); stopped", jobNames(jobs), timeout)
		}
		var bound *boundError
		if errors.As(err, &bound) {
			return nil, fmt.Errorf("spiff evaluation of %s %s; stopped", jobNames(jobs), bound.what)
		}
		return nil, err
	}
	if len(results) != len(jobs) {
		c.stop()
		return nil, fmt.Errorf("spiff child answered %d results to %d jobs", len(results), len(jobs))
	}
	children.put(c)
	return results, nil
}

// boundError is a child stopped by a bound of its memory or stack; what
// says which, after "spiff evaluation of DOCUMENTS".
type boundError struct{ what string }

func (e *boundError) Error() string { return "spiff evaluation " + e.what + "; stopped" }

// errTooLong is a request that took longer than its bound.
var errTooLong = errors.New("spiff evaluation took too long")

// jobNames names the templates of a request, for an error about all of it:
// the first three, and how many more.
func jobNames(jobs []Job) string {
	var names []string
	for i, j := range jobs {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(jobs)-i))
			break
		}
		names = append(names, j.Template.Name)
	}
	return strings.Join(names, ", ")
}

// spiffChild is a running spiff child process.
type spiffChild struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.Closer
	dec    *json.Decoder
	stderr *head
}

// pool keeps idle children for the next requests.
type pool struct {
	mu   sync.Mutex
	idle []*spiffChild
}

// maxIdle is how many children wait for requests: as many as evaluations
// a run makes at once, on a small machine.
const maxIdle = 4

var children pool

// get takes an idle child, or starts one.
func (p *pool) get() (*spiffChild, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	return startChild()
}

// put gives a child back for the next request, or stops it when enough
// wait.
func (p *pool) put(c *spiffChild) {
	p.mu.Lock()
	if len(p.idle) < maxIdle {
		p.idle = append(p.idle, c)
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		c.stop()
	}
}

// startChild starts this program as a spiff child. It dies with gantry,
// however gantry ends: an idle child reads the end of its input, a busy one
// gets SIGKILL from the kernel when gantry dies and looks for its parent
// itself (exitWhenOrphaned).
func startChild() (*spiffChild, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find gantry's own program to run spiff: %w", err)
	}
	cmd := exec.Command(self)
	// The child's soft memory limit is half its address space, given as
	// GOMEMLIMIT: the runtime has it from the start, and gantry's
	// collector pace (internal/gcpace) keeps a GOMEMLIMIT that is set
	// (a limit set later, with the collector still off until the first
	// collection, would put that collection at the limit).
	cmd.Env = append(os.Environ(), childEnv+"=1",
		childEnv+"_STACK="+strconv.Itoa(EvalStack),
		childEnv+"_MEMORY="+strconv.FormatUint(EvalMemory, 10),
		childEnv+"_PARENT="+strconv.Itoa(os.Getpid()),
		"GOMEMLIMIT="+strconv.FormatUint(EvalMemory/2, 10))
	// A group of its own: stopping it stops the commands a template runs
	// (exec, pipe), which would go on alone after a timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start a spiff child: %w", err)
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, fmt.Errorf("start a spiff child: %w", err)
	}
	// Its stdin and stdout are /dev/null: requests and results go by
	// descriptors of their own (requestFD, resultFD).
	cmd.ExtraFiles = []*os.File{reqR, resW}
	c := &spiffChild{cmd: cmd, in: reqW, out: resR, dec: json.NewDecoder(resR), stderr: &head{n: 4096}}
	cmd.Stderr = c.stderr
	err = cmd.Start()
	// The child has its ends; the parent keeps only its own, so that the
	// child's exit ends the results.
	reqR.Close()
	resW.Close()
	if err != nil {
		reqW.Close()
		resR.Close()
		return nil, fmt.Errorf("start a spiff child: %w", err)
	}
	return c, nil
}

// serve sends one request and waits for its answer, at most timeout: a
// child that takes longer is killed.
func (c *spiffChild) serve(ctx context.Context, req []byte, timeout time.Duration) ([]Result, error) {
	type answer struct {
		results []Result
		err     error
	}
	done := make(chan answer, 1)
	go func() {
		if _, err := c.in.Write(append(req, '\n')); err != nil {
			done <- answer{err: err}
			return
		}
		var results []Result
		err := c.dec.Decode(&results)
		done <- answer{results, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-done:
		if a.err != nil {
			c.stop()
			return nil, childFailure(a.err, c.cmd.ProcessState, c.stderr.String())
		}
		return a.results, nil
	case <-timer.C:
		c.stop()
		<-done
		return nil, errTooLong
	case <-ctx.Done():
		c.stop()
		<-done
		return nil, ctx.Err()
	}
}

// stop ends a child: its input closed, then killed if it still runs.
func (c *spiffChild) stop() {
	_ = c.in.Close()
	if c.cmd.Process != nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		_ = c.cmd.Process.Kill()
	}
	_ = c.cmd.Wait()
	_ = c.out.Close()
}

// childFailure says why a child died: the bounds show in its last words.
func childFailure(err error, ended *os.ProcessState, stderr string) error {
	switch {
	case bytes.Contains([]byte(stderr), []byte("stack exceeds")):
		return &boundError{"recursed too deep (a template calling itself without end?), to the stack bound"}
	case bytes.Contains([]byte(stderr), []byte("out of memory")) || bytes.Contains([]byte(stderr), []byte("cannot allocate memory")) ||
		bytes.Contains([]byte(stderr), []byte("pthread_create failed")):
		return &boundError{fmt.Sprintf("needed more memory than its bound (%d GiB of address space: a list of millions of items?)", EvalMemory>>30)}
	}
	first := stderr
	if i := bytes.IndexByte([]byte(first), '\n'); i > 0 {
		first = first[:i]
	}
	if ended != nil && !ended.Success() {
		// It died (killed from outside, a crash): say how, not only
		// that its answer ended.
		err = fmt.Errorf("%w (the spiff process %s)", err, ended)
	}
	if first == "" {
		return fmt.Errorf("spiff evaluation failed: %v", err)
	}
	return fmt.Errorf("spiff evaluation failed: %v: %s", err, first)
}

// head keeps the first n bytes written to it: a child's stderr, read when
// it dies (at its first fatal error).
type head struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int
}

// Write keeps what still fits and takes the rest without keeping it.
func (h *head) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.n - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// String is what was kept.
func (h *head) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.String()
}
