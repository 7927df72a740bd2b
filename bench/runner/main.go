// Command runner runs the benchmark cases of bench/README.md: for each case,
// gantry and GNU make -j with the same parallelism, alternately, several
// rounds, and prints one table of medians. Its last line is the headline,
// ratio_vs_make=<median ratio over the no-op 1,000-node cases>.
//
// bench/run.sh builds gantry and calls it; run it directly with
//
//	go run ./bench/runner -gantry ./gantry [-quick] [-rounds 5] [-parallel 8]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/bench/casegen"
)

type options struct {
	gantry   string
	work     string
	rounds   int
	parallel int
	only     *regexp.Regexp
}

// wants reports whether -only selects the case.
func (o options) wants(name string) bool { return o.only == nil || o.only.MatchString(name) }

// run is one measured command.
type run struct {
	wall time.Duration
	rss  int64 // peak resident set, KiB
}

// row is one line of the table.
type row struct {
	name        string
	n, p        int
	gantry, mk  time.Duration // medians; mk is 0 when make has no part
	rss         int64
	overheadPer time.Duration
	noop1000    bool
}

func main() {
	var o options
	quick := flag.Bool("quick", false, "N up to 1,000 and 3 rounds (under 2 minutes)")
	flag.StringVar(&o.gantry, "gantry", "", "gantry binary to measure (required)")
	flag.StringVar(&o.work, "work", "bench/.work", "folder for the generated cases (on a real disk, not tmpfs)")
	flag.IntVar(&o.rounds, "rounds", 0, "rounds per case (default 5, 3 with -quick)")
	flag.IntVar(&o.parallel, "parallel", 8, "parallelism of both gantry and make")
	only := flag.String("only", "", "run only the cases whose name matches this regular expression")
	flag.Parse()
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "runner: -only:", err)
			os.Exit(2)
		}
		o.only = re
	}
	if o.gantry == "" {
		fmt.Fprintln(os.Stderr, "usage: runner -gantry PATH [-quick] [-rounds R] [-parallel P] [-only REGEXP]")
		os.Exit(2)
	}
	if o.rounds == 0 {
		o.rounds = 5
		if *quick {
			o.rounds = 3
		}
	}
	sizes := []int{10, 100, 1000, 10000}
	if *quick {
		sizes = sizes[:3]
	}
	if err := benchmark(context.Background(), o, sizes); err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(1)
	}
}

func benchmark(ctx context.Context, o options, sizes []int) error {
	abs, err := filepath.Abs(o.gantry)
	if err != nil {
		return err
	}
	o.gantry = abs
	if _, err := exec.LookPath("make"); err != nil {
		return errors.New("GNU make is not installed (bench/run.sh installs it)")
	}
	fmt.Printf("# %s, %d CPUs, %s; gantry %s; %d rounds, medians\n", runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), firstLine("make", "--version"), firstLine(o.gantry, "version"), o.rounds)
	fmt.Printf("%-22s %6s %3s %11s %11s %6s %16s %10s\n", "case", "N", "P", "gantry_ms", "make_ms", "ratio", "overhead_ms/comp", "gantry_MB")
	var rows []row
	emit := func(r row) {
		rows = append(rows, r)
		mk, ratio := "-", "-"
		if r.mk > 0 {
			mk = ms(r.mk)
			ratio = fmt.Sprintf("%.2f", float64(r.gantry)/float64(r.mk))
		}
		over := "-"
		if r.overheadPer > 0 || r.mk > 0 {
			over = fmt.Sprintf("%.3f", float64(r.overheadPer.Microseconds())/1000)
		}
		fmt.Printf("%-22s %6d %3d %11s %11s %6s %16s %10.1f\n", r.name, r.n, r.p, ms(r.gantry), mk, ratio, over, float64(r.rss)/1024)
	}
	type spec struct {
		shape, work string
		n           int
	}
	var specs []spec
	for _, n := range sizes {
		for _, shape := range casegen.Shapes {
			specs = append(specs, spec{shape, "noop", n})
		}
	}
	specs = append(specs, spec{"random", "sleep", 200})
	for _, s := range specs {
		name := fmt.Sprintf("%s-%s-%d", s.work, s.shape, s.n)
		if !o.wants(name) {
			continue
		}
		dir := filepath.Join(o.work, name)
		c, err := casegen.Generate(dir, s.shape, s.n, 1, s.work)
		if err != nil {
			return err
		}
		r, err := versusMake(ctx, o, dir, c)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r.name = name
		r.noop1000 = s.work == "noop" && s.n == 1000
		emit(r)
	}
	for _, n := range []int{1000, 10000} {
		if !slices.Contains(sizes, n) {
			continue
		}
		name := fmt.Sprintf("resume-random-%d", n)
		if o.wants(name) {
			dir := filepath.Join(o.work, fmt.Sprintf("noop-random-%d", n))
			if _, err := casegen.Generate(dir, "random", n, 1, "noop"); err != nil {
				return err
			}
			r, err := resume(ctx, o, dir, n)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			r.name = name
			emit(r)
		}
	}
	if name := "plan-random-10000"; slices.Contains(sizes, 10000) && (o.wants(name)) {
		dir := filepath.Join(o.work, "noop-random-10000")
		if _, err := casegen.Generate(dir, "random", 10000, 1, "noop"); err != nil {
			return err
		}
		r, err := planOnly(ctx, o, dir, 10000)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		r.name = name
		emit(r)
	}
	var ratios []float64
	for _, r := range rows {
		if r.noop1000 && r.mk > 0 {
			ratios = append(ratios, float64(r.gantry)/float64(r.mk))
		}
	}
	if len(ratios) == 0 {
		fmt.Println("ratio_vs_make=n/a")
		return nil
	}
	fmt.Printf("ratio_vs_make=%.2f\n", median(ratios))
	return nil
}

// versusMake runs a fresh deploy and make -j alternately, starting with the
// other one each round so that neither always runs on a warm cache.
func versusMake(ctx context.Context, o options, dir string, c casegen.Case) (row, error) {
	if err := cleanGantry(dir); err != nil {
		return row{}, err
	}
	var g, m []run
	// Round -1 warms caches (binaries, the case's files) and is not counted.
	for i := -1; i < o.rounds; i++ {
		order := []bool{true, false}
		if i%2 != 0 {
			order = []bool{false, true}
		}
		for _, isGantry := range order {
			if isGantry {
				if err := forgetState(dir); err != nil {
					return row{}, err
				}
				r, err := measure(ctx, dir, o.gantry, "deploy", "--parallel", fmt.Sprint(o.parallel), "hub.yaml")
				if err != nil {
					return row{}, err
				}
				if i >= 0 {
					g = append(g, r)
				}
			} else {
				r, err := measure(ctx, dir, "make", "-s", "-j", fmt.Sprint(o.parallel), "-f", "Makefile", "all")
				if err != nil {
					return row{}, err
				}
				if i >= 0 {
					m = append(m, r)
				}
			}
		}
	}
	gw, mw := medianWall(g), medianWall(m)
	crit := time.Duration(c.CriticalPath * float64(time.Second))
	return row{n: c.N, p: o.parallel, gantry: gw, mk: mw, rss: maxRSS(g), overheadPer: (gw - crit) / time.Duration(c.N)}, nil
}

// resume measures a redeploy with --resume of a deployed, unchanged stack:
// every component is skipped by its fingerprint.
func resume(ctx context.Context, o options, dir string, n int) (row, error) {
	if err := cleanGantry(dir); err != nil {
		return row{}, err
	}
	if _, err := measure(ctx, dir, o.gantry, "deploy", "--parallel", fmt.Sprint(o.parallel), "hub.yaml"); err != nil {
		return row{}, err
	}
	var rs []run
	for i := 0; i < o.rounds; i++ {
		r, err := measure(ctx, dir, o.gantry, "deploy", "--resume", "--parallel", fmt.Sprint(o.parallel), "hub.yaml")
		if err != nil {
			return row{}, err
		}
		rs = append(rs, r)
	}
	return row{n: n, p: o.parallel, gantry: medianWall(rs), rss: maxRSS(rs)}, nil
}

// planOnly measures elaborate + lock + plan of a stack, from its hub.yaml.
func planOnly(ctx context.Context, o options, dir string, n int) (row, error) {
	var rs []run
	for i := 0; i < o.rounds; i++ {
		if err := forgetState(dir); err != nil {
			return row{}, err
		}
		r, err := measure(ctx, dir, o.gantry, "plan", "hub.yaml")
		if err != nil {
			return row{}, err
		}
		rs = append(rs, r)
	}
	return row{n: n, p: 1, gantry: medianWall(rs), rss: maxRSS(rs)}, nil
}

// cleanGantry removes everything gantry runs left in a case.
func cleanGantry(dir string) error {
	if err := forgetState(dir); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(dir, ".gantry"))
}

// forgetState removes the state, so that the next run deploys every
// component. The run folders stay, as they do for users: deleting thousands
// of files just before a run would measure the filesystem (ext4 avoids
// reusing recently freed inodes, and creating files right after a mass
// deletion costs many times more).
func forgetState(dir string) error {
	for _, p := range []string{"hub.yaml.state", "hub.yaml.state.lock", "hub.yaml.elaborate"} {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			return err
		}
	}
	return nil
}

// measure runs a command in dir and returns its wall time and peak memory;
// a failure returns the end of its output.
func measure(ctx context.Context, dir, name string, args ...string) (run, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		tail := out.String()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return run{}, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return run{wall: wall, rss: rss}, nil
}

func medianWall(rs []run) time.Duration {
	ws := make([]float64, len(rs))
	for i, r := range rs {
		ws[i] = float64(r.wall)
	}
	return time.Duration(median(ws))
}

func maxRSS(rs []run) int64 {
	var m int64
	for _, r := range rs {
		m = max(m, r.rss)
	}
	return m
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return name + " (version unknown)"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
