package landscape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestEvaluate runs spiff in its child: stubs, state, and issues with
// their paths.
func TestEvaluate(t *testing.T) {
	jobs := []Job{
		{Template: Doc{Name: "t.yaml", Data: []byte("a: (( merge ))\nb: (( a \"-x\" ))\n")}, Stubs: []Doc{{Name: "s.yaml", Data: []byte("a: v\n")}}},
		{Template: Doc{Name: "s.yaml", Data: []byte("k: (( &state(merge || \"new\") ))\n")}, State: &Doc{Name: "st.yaml", Data: []byte("k: old\n")}, WantState: true},
		{Template: Doc{Name: "bad.yaml", Data: []byte("x:\n  z: (( nothere ))\n")}},
	}
	res, err := Evaluate(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res[0].JSON); got != `{"a":"v","b":"v-x"}` {
		t.Errorf("stub: got %s", got)
	}
	if got := string(res[1].JSON); got != `{"k":"old"}` || !strings.Contains(string(res[1].State), "k: old") {
		t.Errorf("state: got %s, state %q", got, res[1].State)
	}
	if len(res[2].Issues) != 1 || strings.Join(res[2].Issues[0].Path, ".") != "x.z" || !strings.Contains(res[2].Issues[0].Msg, "nothere") {
		t.Errorf("issues: got %+v", res[2].Issues)
	}
}

// TestEvaluateBounds: a template that loops for long (and grows its
// memory) ends with an error naming the bound; gantry goes on.
func TestEvaluateBounds(t *testing.T) {
	defer func(d time.Duration, m uint64) { EvalTimeout, EvalMemory = d, m }(EvalTimeout, EvalMemory)
	EvalTimeout = time.Second
	loop := Job{Template: Doc{Name: "loop.yaml", Data: []byte("l: (( sum[[1..300000000]|0|s,i|->s + i] ))\n")}}
	_, err := Evaluate(context.Background(), []Job{loop})
	if err == nil || !strings.Contains(err.Error(), "of loop.yaml took longer") && !strings.Contains(err.Error(), "memory") {
		t.Fatalf("got %v", err)
	}
	// The child that ran out of time is gone; the next request gets one.
	res, err := Evaluate(context.Background(), []Job{{Template: Doc{Name: "t.yaml", Data: []byte("a: 1\n")}}})
	if err != nil || string(res[0].JSON) != `{"a":1}` {
		t.Fatalf("after a stopped child: %v %v", res, err)
	}
}

// TestEvaluateReusesChildren: a child serves request after request.
func TestEvaluateReusesChildren(t *testing.T) {
	job := []Job{{Template: Doc{Name: "t.yaml", Data: []byte("a: (( 1 + 1 ))\n")}}}
	pids := map[int]bool{}
	for i := 0; i < 3; i++ {
		res, err := Evaluate(context.Background(), job)
		if err != nil || string(res[0].JSON) != `{"a":2}` {
			t.Fatalf("request %d: %v %v", i, res, err)
		}
		c, err := children.get()
		if err != nil {
			t.Fatal(err)
		}
		pids[c.cmd.Process.Pid] = true
		children.put(c)
	}
	if len(pids) != 1 {
		t.Errorf("three requests one after another used %d children, want 1", len(pids))
	}
}

// TestIssuePositions maps spiff's node paths to file:line:col.
func TestIssuePositions(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/d.yaml"
	writeFile(t, p, "a:\n  list:\n    - name: one\n      v: 1\n    - x: (( y ))\n")
	pos := newPositions()
	for _, tc := range []struct {
		path      []string
		line, col int
	}{
		{[]string{"a", "list", "[1]", "x"}, 5, 7},
		{[]string{"a", "list", "one", "v"}, 4, 7},
		{[]string{"a", "missing"}, 1, 1},
	} {
		got := pos.at(p, tc.path)
		if got.Line != tc.line || got.Col != tc.col {
			t.Errorf("%v: got %d:%d, want %d:%d", tc.path, got.Line, got.Col, tc.line, tc.col)
		}
	}
}

// FuzzEvaluate feeds spiff templates and stubs through the child: an error
// or a result, never a crash or a hang of gantry.
func FuzzEvaluate(f *testing.F) {
	f.Add("a: (( b ))\n", "b: 1\n")
	f.Add("a: (( &state(merge) ))\n", "")
	f.Add("<<: (( merge ))\n", "x: [1, 2]\n")
	f.Add("f: (( |x|->_(x) ))\nv: (( f(1) ))\n", "")
	defer func(d time.Duration) { EvalTimeout = d }(EvalTimeout)
	EvalTimeout = 5 * time.Second
	f.Fuzz(func(t *testing.T, tmpl, stub string) {
		_, _ = Evaluate(context.Background(), []Job{{Template: Doc{Name: "t.yaml", Data: []byte(tmpl)},
			Stubs: []Doc{{Name: "s.yaml", Data: []byte(stub)}}, State: &Doc{Name: "st.yaml", Data: []byte(stub)}, WantState: true, WantYAML: true},
			{Template: Doc{Name: "t.yaml", Data: []byte(tmpl)}, Stubs: []Doc{{Name: "s.yaml", Data: []byte(stub)}}, Partial: true}})
	})
}

// TestIssuePositionsReadOnlyFiles: a document spiff names that is a FIFO
// on disk (a made-up name like "env" can be a file of the working folder)
// is not read: no position, no hang.
func TestIssuePositionsReadOnlyFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "env")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan manifest.Pos, 1)
	go func() { done <- newPositions().at(fifo, []string{"a"}) }()
	select {
	case p := <-done:
		if p.Line != 0 {
			t.Errorf("got a position in a FIFO: %+v", p)
		}
	case <-time.After(time.Minute): // a bound that turns a hang into a failure
		t.Fatal("reading the FIFO hangs")
	}
}

// TestPartialRunsNothing: plan and validate evaluate a landscape partially;
// that reads files but runs no command and writes no file (they stay
// unresolved), while the run's full evaluation does both, as sow does.
func TestPartialRunsNothing(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("read me"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl := fmt.Sprintf("a: (( exec(\"touch\", %q) ))\nb: (( write(%q, \"x\") ))\nc: (( read(%q, \"text\") ))\n",
		filepath.Join(dir, "ran"), filepath.Join(dir, "written"), in)
	job := Job{Template: Doc{Name: filepath.Join(dir, "t.yaml"), Data: []byte(tmpl)}}
	partialJob := job
	partialJob.Partial = true
	res, err := Evaluate(context.Background(), []Job{partialJob})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ran", "written"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("a partial evaluation made %s", f)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(res[0].JSON, &got); err != nil {
		t.Fatalf("partial result %s: %v", res[0].JSON, err)
	}
	if got["c"] != "read me" || got["a"] != Unresolved || got["b"] != Unresolved {
		t.Errorf("partial result: %v, want c read and a, b unresolved", got)
	}
	if _, err := Evaluate(context.Background(), []Job{job}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ran", "written"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the full evaluation did not make %s: %v", f, err)
		}
	}
}

// TestEvaluateStdinIsNotTheRequests: a template that reads /dev/stdin or
// writes /dev/stdout meets /dev/null, not the child's requests and
// results: it took the next request and hung for the whole timeout.
func TestEvaluateStdinIsNotTheRequests(t *testing.T) {
	defer func(d time.Duration) { EvalTimeout = d }(EvalTimeout)
	EvalTimeout = time.Minute
	for _, tmpl := range []string{
		"x: (( read(\"/dev/stdin\") ))\n",
		"x: (( write(\"/dev/stdout\", \"[oops]\") ))\n",
	} {
		_, err := Evaluate(context.Background(), []Job{{Template: Doc{Name: "t.yaml", Data: []byte(tmpl)}}})
		if err != nil && strings.Contains(err.Error(), "took longer") {
			t.Fatalf("%q: %v", tmpl, err)
		}
		res, err := Evaluate(context.Background(), []Job{{Template: Doc{Name: "t.yaml", Data: []byte("a: 1\n")}}})
		if err != nil || string(res[0].JSON) != `{"a":1}` {
			t.Fatalf("after %q: %v %v", tmpl, res, err)
		}
	}
}

// TestEvaluateStopStopsCommands: a template's command still running when
// its evaluation is stopped (a timeout, an interrupt: one path, stop) is
// stopped with the child (it went on alone). Stopped by cancelling once
// the command runs, so that no bound on the machine's speed is needed.
func TestEvaluateStopStopsCommands(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	tmpl := fmt.Sprintf("x: (( exec(\"sh\", \"-c\", \"echo $$ > %s.new; mv %s.new %s; exec sleep 600\") ))\n", pidFile, pidFile, pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Evaluate(ctx, []Job{{Template: Doc{Name: "t.yaml", Data: []byte(tmpl)}}})
		done <- err
	}()
	var pid int
	for deadline := time.Now().Add(time.Minute); pid == 0; {
		if data, err := os.ReadFile(pidFile); err == nil {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(data))); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the command did not start: %v", <-done)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the evaluation cancelled", err)
	}
	// Killed, it may stay a zombie until init reaps it: gone or a zombie.
	for deadline := time.Now().Add(time.Minute); ; {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
