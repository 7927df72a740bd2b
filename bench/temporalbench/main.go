// Command temporalbench measures gantry's Temporal engine against the local
// executor (bench/README.md, docs/temporal.md): N independent components of
// S seconds each (a sleep), deployed by the local executor with --parallel
// P·W and by W `gantry worker` processes of --parallel P each, for each W.
// It prints the makespan of each deploy against the ideal (N·S / (P·W)),
// and what each engine adds per component: from its first step's start to
// its last step's end, less the time its deploy step's process ran, p50
// and p99 — the begin and end steps and the scheduling between them.
//
// bench/temporal.sh starts the servers and builds gantry; run it directly
// with
//
//	go run ./bench/temporalbench -gantry BIN -engine temporal://HOST:PORT/default -state postgres://... [-n 200] [-seconds 1] [-parallel 4] [-workers 1,2,4] [-rounds 1]
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/gitroot"
)

func main() {
	gantry := flag.String("gantry", "gantry", "the gantry binary")
	engine := flag.String("engine", "", "temporal://HOST:PORT/NAMESPACE")
	stateURL := flag.String("state", "", "postgres://... (a database the benchmark may write)")
	n := flag.Int("n", 200, "components")
	seconds := flag.Float64("seconds", 1, "each component's work, in seconds")
	parallel := flag.Int("parallel", 4, "steps at once per worker")
	workersFlag := flag.String("workers", "1,2,4", "numbers of workers")
	rounds := flag.Int("rounds", 1, "rounds of each case")
	work := flag.String("work", "bench/.work/temporal", "where the stack is written")
	flag.Parse()
	if *engine == "" || *stateURL == "" {
		fmt.Fprintln(os.Stderr, "temporalbench: -engine and -state are required")
		os.Exit(2)
	}
	bin, err := filepath.Abs(*gantry)
	check(err)
	dir, err := filepath.Abs(*work)
	check(err)
	check(writeStack(dir, *n, *seconds))
	var ws []int
	for _, f := range strings.Split(*workersFlag, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		ws = append(ws, w)
	}
	fmt.Printf("%d components of %gs each; each worker --parallel %d; the local executor --parallel %d·W\n\n", *n, *seconds, *parallel, *parallel)
	fmt.Printf("%-9s %7s %8s %10s %8s %8s %17s %17s\n", "engine", "workers", "parallel", "makespan_s", "ideal_s", "ratio", "overhead_ms_p50", "overhead_ms_p99")
	for _, w := range ws {
		p := *parallel * w
		ideal := float64(*n) * *seconds / float64(p)
		for r := 0; r < *rounds; r++ {
			res, err := deploy(bin, dir, *stateURL, "local", p, 0, 0)
			check(err)
			res.print("local", "-", p, ideal)
			// A queue of its own: no worker of another run takes its steps.
			queue := *engine
			if strings.Contains(queue, "?") {
				queue += "&"
			} else {
				queue += "?"
			}
			queue += "queue=bench-" + random()
			res, err = deploy(bin, dir, *stateURL, queue, p, w, *parallel)
			check(err)
			res.print("temporal", strconv.Itoa(w), p, ideal)
		}
	}
}

// result is one deploy's figures.
type result struct {
	makespan time.Duration
	overhead []time.Duration // per component, sorted
}

func (r result) print(engine, workers string, p int, ideal float64) {
	fmt.Printf("%-9s %7s %8d %10.1f %8.1f %8.2f %17.0f %17.0f\n", engine, workers, p, r.makespan.Seconds(), ideal,
		r.makespan.Seconds()/ideal, ms(percentile(r.overhead, 0.5)), ms(percentile(r.overhead, 0.99)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted)) + 0.5)
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// deploy runs one deploy: locally, or on workers (started here, stopped
// after), and reads its run's events.
func deploy(bin, dir, stateURL, engine string, parallel, workers, perWorker int) (result, error) {
	env := append(os.Environ(), "GANTRY_STATE="+stateURL, "NO_COLOR=1")
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
			_ = p.Wait()
		}
	}()
	for i := 0; i < workers; i++ {
		log := filepath.Join(dir, fmt.Sprintf("worker%d.log", i))
		f, err := os.Create(log)
		if err != nil {
			return result{}, err
		}
		cmd := exec.Command(bin, "worker", "--engine", engine, "--parallel", strconv.Itoa(perWorker), "--dir", gitroot.Find(dir))
		cmd.Env, cmd.Stdout, cmd.Stderr = env, f, f
		if err := cmd.Start(); err != nil {
			return result{}, err
		}
		f.Close()
		procs = append(procs, cmd)
		for {
			data, _ := os.ReadFile(log)
			if strings.Contains(string(data), "taking steps") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	cmd := exec.Command(bin, "deploy", "hub.yaml", "--engine", engine, "--parallel", strconv.Itoa(parallel), "--output", "json")
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	makespan := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("deploy on %s: %v\n%s", engine, err, tail(out))
	}
	logDir := ""
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Event  string `json:"event"`
			LogDir string `json:"log_dir"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "run_finished" {
			logDir = ev.LogDir
		}
	}
	if logDir == "" {
		return result{}, fmt.Errorf("no run_finished event in the deploy's output")
	}
	over, err := overheads(filepath.Join(dir, logDir, "events.jsonl"))
	return result{makespan: makespan, overhead: over}, err
}

// overheads reads a run's events: for each component, from its begin's
// start to its end's end, less its deploy step's duration.
func overheads(path string) ([]time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type comp struct {
		first, last time.Time
		work        time.Duration
	}
	comps := map[string]*comp{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Time       time.Time `json:"time"`
			Event      string    `json:"event"`
			Step       string    `json:"step"`
			Kind       string    `json:"kind"`
			Component  string    `json:"component"`
			DurationMS *int64    `json:"duration_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Component == "" {
			continue
		}
		c := comps[ev.Component]
		if c == nil {
			c = &comp{}
			comps[ev.Component] = c
		}
		switch {
		case ev.Event == "step_started" && ev.Kind == "begin":
			c.first = ev.Time
		case ev.Event == "step_finished" && ev.Kind == "end":
			c.last = ev.Time
		case ev.Event == "step_finished" && ev.Kind == "component" && ev.DurationMS != nil:
			c.work = time.Duration(*ev.DurationMS) * time.Millisecond
		}
	}
	var out []time.Duration
	for _, c := range comps {
		if !c.first.IsZero() && !c.last.IsZero() {
			out = append(out, c.last.Sub(c.first)-c.work)
		}
	}
	slices.Sort(out)
	return out, sc.Err()
}

// writeStack writes n independent components that each sleep.
func writeStack(dir string, n int, seconds float64) error {
	if err := os.MkdirAll(filepath.Join(dir, "comp"), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("version: 1\nkind: stack\nmeta: {name: temporalbench}\ncomponents:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - name: c%03d\n    source: {dir: comp}\n", i)
	}
	files := map[string]string{
		"hub.yaml":                b.String(),
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/deploy":             fmt.Sprintf("#!/bin/sh\nexec sleep %g\n", seconds),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			return err
		}
	}
	return nil
}

func random() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporalbench:", err)
		os.Exit(1)
	}
}
