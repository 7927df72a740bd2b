// Command runner runs the benchmark cases of bench/README.md: for each case,
// gantry and GNU make -j with the same parallelism, back to back in every
// round (the order rotating from round to round), and prints one table. The
// ratios are paired: each round gives one ratio gantry/make, and the table
// shows the smallest, the median and the largest of them; the other columns
// are medians over the rounds. With -gantry-b a second gantry binary (B) runs
// in the same rounds, and the table adds B/make and the paired B/A.
//
// The last lines are the headline: cost_per_comp_ms=<median over the
// no-op 1,000-node cases of (gantry − make) / N>, body_vs_make=<the same
// of their median body ratios (phases.go)> and, last, ratio_vs_make=<the
// same of their median ratios>.
//
// bench/run.sh builds gantry and calls it; run it directly with
//
//	go run ./bench/runner -gantry ./gantry [-gantry-b ./gantry-old] [-quick] [-rounds 7] [-parallel 8] [-only REGEXP] [-shapes random,fanout,chain] [-tty]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
	gantry   string // A
	gantryB  string // B, or ""
	labelB   string // what B is, for the header
	work     string
	rounds   int
	quick    bool
	parallel int
	only     *regexp.Regexp
	shapes   []string
	postgres string // a DSN: measure the PostgreSQL state backend too
	tty      bool   // measure the live display on a terminal against the plain one
	// out receives the output of every measured command: a file, so that
	// the commands write to it directly and the runner copies nothing while
	// they run. It is emptied before each command.
	out *os.File
	// trash is where what the runner would delete is moved (setAside),
	// to be deleted once everything is measured.
	trash     string
	keepTrash bool // -keep-trash: leave it, for runs in a row
}

// setAside moves path (when it exists) into the trash instead of deleting
// it: on ext4 without a journal (this project's VM), creating files is
// 10-40 times slower for up to five minutes after thousands were deleted —
// the inode allocator passes over recently deleted inodes one by one
// (recently_deleted in the kernel's ialloc.c) — and gantry creates a log
// file per component, make none: a deletion just before the rounds would
// measure the filesystem.
func setAside(o options, path string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.MkdirAll(o.trash, 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(o.trash, filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	return os.Rename(path, filepath.Join(dir, filepath.Base(path)))
}

// wants reports whether -only selects the case.
func (o options) wants(name string) bool { return o.only == nil || o.only.MatchString(name) }

// gantries are the gantry binaries measured: A, then B in A/B mode.
func (o options) gantries() []string {
	if o.gantryB == "" {
		return []string{o.gantry}
	}
	return []string{o.gantry, o.gantryB}
}

func (o options) ab() bool { return o.gantryB != "" }

// sample is one measured command.
type sample struct {
	wall time.Duration
	cpu  time.Duration // user + system, the command's and its waited-for descendants'
	// own is gantry's own user + system, without its children
	// (GANTRY_RUSAGE); 0 for make, and for a gantry that does not write it.
	own time.Duration
	rss int64 // peak resident set, KiB
	// began and ended are the wall-clock times around the command.
	began, ended time.Time
	// lead and tail are a gantry deploy's phases (runPhases); phased says
	// they were read.
	lead, tail time.Duration
	phased     bool
}

// spread is the smallest, median and largest of per-round ratios.
type spread struct {
	min, med, max float64
	ok            bool
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	return spread{min: slices.Min(xs), med: median(xs), max: slices.Max(xs), ok: true}
}

func (s spread) String() string {
	if !s.ok {
		return "-"
	}
	return fmt.Sprintf("%.2f/%.2f/%.2f", s.min, s.med, s.max)
}

// stats sums up one tool's rounds of a case.
type stats struct {
	wall, cpu, own time.Duration // medians
	lead, tail     time.Duration // medians, of deploys whose phases were read
	body           spread        // per-round (wall − lead − tail) / make's wall
	rss            int64         // the largest peak, KiB
	vsMake         spread        // per-round ratios to make; !ok without make
	cost           float64       // median per-round (tool − make) / N, ms; only with make
}

func statsOf(rs []sample) stats {
	ws, cs, owns := make([]float64, len(rs)), make([]float64, len(rs)), make([]float64, len(rs))
	var rss int64
	for i, r := range rs {
		ws[i], cs[i], owns[i] = float64(r.wall), float64(r.cpu), float64(r.own)
		rss = max(rss, r.rss)
	}
	st := stats{wall: time.Duration(median(ws)), cpu: time.Duration(median(cs)), own: time.Duration(median(owns)), rss: rss}
	var leads, tails []float64
	for _, r := range rs {
		if r.phased {
			leads, tails = append(leads, float64(r.lead)), append(tails, float64(r.tail))
		}
	}
	if len(leads) > 0 {
		st.lead, st.tail = time.Duration(median(leads)), time.Duration(median(tails))
	}
	return st
}

// row is one line of the table.
type row struct {
	name      string
	n, p      int
	deploy    bool    // a fresh deploy measured against make
	gantries  []stats // A, then B in A/B mode
	make      stats   // when deploy
	bOverA    spread  // per-round B/A, in A/B mode
	ownBOverA spread  // per-round B/A of gantry's own CPU, in A/B mode
	noop1000  bool
}

func main() {
	var o options
	flag.BoolVar(&o.quick, "quick", false, "N up to 1,000 and 3 rounds")
	flag.StringVar(&o.gantry, "gantry", "", "gantry binary to measure (required); A in A/B mode")
	flag.StringVar(&o.gantryB, "gantry-b", "", "a second gantry binary (B), measured in the same rounds as A and make")
	flag.StringVar(&o.labelB, "label-b", "", "what the -gantry-b binary is (a revision), for the header")
	flag.StringVar(&o.work, "work", "bench/.work", "folder for the generated cases (on a real disk, not tmpfs)")
	flag.BoolVar(&o.keepTrash, "keep-trash", false, "leave the run folders set aside in <work>/.trash instead of deleting them at the end (for runs in a row; delete it yourself, then wait five minutes before measuring)")
	flag.IntVar(&o.rounds, "rounds", 0, "measured rounds per case (default 7, 3 with -quick)")
	flag.IntVar(&o.parallel, "parallel", 8, "parallelism of both gantry and make")
	only := flag.String("only", "", "run only the cases whose name matches this regular expression")
	postgres := flag.String("postgres", "", "a PostgreSQL DSN: also measure the PostgreSQL state backend against the file backend (bench/run.sh --postgres starts a server)")
	flag.BoolVar(&o.tty, "tty", false, "also measure the live display: the no-op random 1,000 deploy on a pseudo-terminal against with its output in a file")
	shapes := flag.String("shapes", strings.Join(casegen.Shapes, ","), "DAG shapes to run, comma-separated (sleep, resume and plan cases are random)")
	flag.Parse()
	usage := func(msg string) {
		if msg != "" {
			fmt.Fprintln(os.Stderr, "runner:", msg)
		}
		fmt.Fprintln(os.Stderr, "usage: runner -gantry PATH [-gantry-b PATH [-label-b TEXT]] [-quick] [-rounds R] [-parallel P] [-only REGEXP] [-shapes S,S]")
		os.Exit(2)
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			usage("-only: " + err.Error())
		}
		o.only = re
	}
	for _, s := range strings.Split(*shapes, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(casegen.Shapes, s) {
			usage(fmt.Sprintf("-shapes: unknown shape %q (casegen has %s)", s, strings.Join(casegen.Shapes, ", ")))
		}
		if !slices.Contains(o.shapes, s) {
			o.shapes = append(o.shapes, s)
		}
	}
	if o.gantry == "" || flag.NArg() > 0 {
		usage("")
	}
	if o.rounds == 0 {
		o.rounds = 7
		if o.quick {
			o.rounds = 3
		}
	}
	if o.rounds < 1 {
		usage("-rounds must be at least 1")
	}
	sizes := []int{10, 100, 1000, 5000, 10000}
	if o.quick {
		sizes = []int{10, 100, 1000}
	}
	o.postgres = *postgres
	if err := benchmark(context.Background(), o, sizes); err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(1)
	}
}

func benchmark(ctx context.Context, o options, sizes []int) error {
	for _, p := range []*string{&o.gantry, &o.gantryB} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if _, err := exec.LookPath("make"); err != nil {
		return errors.New("GNU make is not installed (bench/run.sh installs it)")
	}
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	work, err := filepath.Abs(o.work)
	if err != nil {
		return err
	}
	// Absolute: the commands run in the cases' folders, and gantry writes
	// its GANTRY_RUSAGE file next to it.
	out, err := os.CreateTemp(work, "runner-output-*.log")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	defer os.Remove(out.Name() + ".rusage")
	defer out.Close()
	o.out = out
	o.trash = filepath.Join(work, ".trash")
	// What earlier runs set aside goes now, after everything is measured.
	defer emptyTrash(o)

	printHeader(o)
	cols := columns(o)
	var head []string
	for _, c := range cols {
		head = append(head, c.cell(c.head))
	}
	fmt.Println(strings.Join(head, " "))
	var rows []row
	emit := func(r row) {
		rows = append(rows, r)
		var cells []string
		for _, c := range cols {
			cells = append(cells, c.cell(c.value(r)))
		}
		fmt.Println(strings.Join(cells, " "))
	}

	type spec struct {
		shape, work string
		n           int
	}
	var specs []spec
	for _, n := range sizes {
		for _, shape := range casegen.Shapes {
			if slices.Contains(o.shapes, shape) {
				specs = append(specs, spec{shape, "noop", n})
			}
		}
	}
	random := slices.Contains(o.shapes, "random")
	if random {
		specs = append(specs, spec{"random", "sleep", 200})
	}
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
	// Resume and plan work on the random no-op stacks.
	gantryOnly := []struct {
		kind string
		run  func(ctx context.Context, o options, dir, name string, n int) (row, error)
	}{{"resume", resume}, {"plan", planOnly}, {"plan-undeploy", planUndeploy}, {"plan-offset", planOffset}}
	for _, g := range gantryOnly {
		for _, n := range []int{1000, 10000} {
			name := fmt.Sprintf("%s-random-%d", g.kind, n)
			if !random || !slices.Contains(sizes, n) || !o.wants(name) {
				continue
			}
			dir := filepath.Join(o.work, fmt.Sprintf("noop-random-%d", n))
			if _, err := casegen.Generate(dir, "random", n, 1, "noop"); err != nil {
				return err
			}
			r, err := g.run(ctx, o, dir, name, n)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			r.name = name
			emit(r)
		}
	}
	if o.postgres != "" {
		if err := pgState(ctx, o, o.postgres, 1000); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
	}
	if o.tty {
		if err := ttyDisplay(ctx, o, 1000); err != nil {
			return fmt.Errorf("tty: %w", err)
		}
	}
	summary(o, rows)
	return nil
}

func printHeader(o options) {
	rounds := fmt.Sprintf("%d rounds", o.rounds)
	if o.quick {
		rounds += " (-quick: N up to 1,000)"
	}
	tools := firstLine(o.gantry, "version")
	if o.ab() {
		b := o.labelB
		if b == "" {
			b = o.gantryB
		}
		tools = fmt.Sprintf("A = %s (%s), B = %s (%s)", tools, o.gantry, firstLine(o.gantryB, "version"), b)
	}
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	fmt.Printf("# %s, %d CPUs (load %s), %s; %s; %s\n", runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), load, firstLine("make", "--version"), tools, rounds)
	fmt.Println("# ratios: min/median/max of the per-round ratios (the tools run back to back in each round, the order rotating);")
	fmt.Println("# _ms, _cpu_ms (user+sys, with the commands' children) and cost_ms/comp ((gantry - make) / N, per round): medians; _MB: the largest peak RSS")
	fmt.Println("# _lead_ms: start to the first component's process, _tail_ms: the last one's end to exit (medians); _body/make: per round (gantry - lead - tail) / make")
}

// column is one column of the table.
type column struct {
	head  string
	width int // negative: left-aligned
	value func(row) string
}

func (c column) cell(s string) string { return fmt.Sprintf("%*s", c.width, s) }

// col makes a column at least as wide as its heading.
func col(head string, width int, value func(row) string) column {
	if len(head) > abs(width) {
		width = len(head) * (width / abs(width))
	}
	return column{head, width, value}
}

func abs(x int) int { return max(x, -x) }

func columns(o options) []column {
	cols := []column{
		{"case", -22, func(r row) string { return r.name }},
		{"N", 6, func(r row) string { return fmt.Sprint(r.n) }},
		{"P", 3, func(r row) string { return fmt.Sprint(r.p) }},
	}
	names := []string{"gantry"}
	if o.ab() {
		names = []string{"A", "B"}
	}
	for i, t := range names {
		cols = append(cols, col(t+"_ms", 10, func(r row) string { return ms(r.gantries[i].wall) }))
	}
	cols = append(cols, col("make_ms", 10, func(r row) string { return ifDeploy(r, ms(r.make.wall)) }))
	for i, t := range names {
		head := t + "/make"
		if !o.ab() {
			head = "ratio(min/med/max)"
		}
		cols = append(cols, col(head, 18, func(r row) string { return r.gantries[i].vsMake.String() }))
	}
	if o.ab() {
		cols = append(cols, col("B/A", 18, func(r row) string { return r.bOverA.String() }))
	}
	for i, t := range names {
		cols = append(cols, col(t+"_cpu_ms", 10, func(r row) string { return ms(r.gantries[i].cpu) }))
	}
	cols = append(cols, col("make_cpu_ms", 10, func(r row) string { return ifDeploy(r, ms(r.make.cpu)) }))
	for i, t := range names {
		cols = append(cols, col(t+"_own_ms", 9, func(r row) string {
			if r.gantries[i].own == 0 {
				return "-"
			}
			return ms(r.gantries[i].own)
		}))
	}
	if o.ab() {
		cols = append(cols, col("own_B/A", 18, func(r row) string { return r.ownBOverA.String() }))
	}
	for i, t := range names {
		head := t + "_cost_ms/comp"
		if !o.ab() {
			head = "cost_ms/comp"
		}
		cols = append(cols, col(head, 8, func(r row) string { return ifDeploy(r, fmt.Sprintf("%.3f", r.gantries[i].cost)) }))
	}
	for i, t := range names {
		cols = append(cols, col(t+"_lead_ms", 9, func(r row) string { return phase(r, r.gantries[i].lead) }))
		cols = append(cols, col(t+"_tail_ms", 9, func(r row) string { return phase(r, r.gantries[i].tail) }))
		cols = append(cols, col(t+"_body/make", 18, func(r row) string { return ifDeploy(r, r.gantries[i].body.String()) }))
	}
	for i, t := range names {
		cols = append(cols, col(t+"_MB", 7, func(r row) string { return fmt.Sprintf("%.1f", float64(r.gantries[i].rss)/1024) }))
	}
	for i, t := range names {
		head := t + "_KB/comp"
		if !o.ab() {
			head = "KB/comp"
		}
		cols = append(cols, col(head, 8, func(r row) string {
			return ifDeploy(r, fmt.Sprintf("%.1f", float64(r.gantries[i].rss)/float64(r.n)))
		}))
	}
	return cols
}

// phase is a deploy's lead or tail, "-" when none was read.
func phase(r row, d time.Duration) string {
	if !r.deploy || d == 0 {
		return "-"
	}
	return ms(d)
}

func ifDeploy(r row, s string) string {
	if !r.deploy {
		return "-"
	}
	return s
}

// summary prints the headline lines, the last one ratio_vs_make.
func summary(o options, rows []row) {
	var ratios, costs, bodies [2][]float64
	var bOverA []float64
	for _, r := range rows {
		if !r.noop1000 || !r.deploy {
			continue
		}
		for i, g := range r.gantries {
			ratios[i] = append(ratios[i], g.vsMake.med)
			costs[i] = append(costs[i], g.cost)
			if g.body.ok {
				bodies[i] = append(bodies[i], g.body.med)
			}
		}
		if r.bOverA.ok {
			bOverA = append(bOverA, r.bOverA.med)
		}
	}
	line := func(key string, xs []float64, format string) {
		if len(xs) == 0 {
			fmt.Printf("%s=n/a\n", key)
			return
		}
		fmt.Printf("%s="+format+"\n", key, median(xs))
	}
	if o.ab() {
		line("b_over_a", bOverA, "%.3f")
		line("b_cost_per_comp_ms", costs[1], "%.3f")
		line("b_body_vs_make", bodies[1], "%.2f")
		line("b_ratio_vs_make", ratios[1], "%.2f")
	}
	line("cost_per_comp_ms", costs[0], "%.3f")
	line("body_vs_make", bodies[0], "%.2f")
	line("ratio_vs_make", ratios[0], "%.2f")
}

// order is the order in which k tools run in round r (-1 is the warm-up):
// rotated by one each round, so that each tool takes each place in turn,
// and with three tools or more the cycle reversed every other time round,
// so that each tool also follows each other one as often.
func order(k, r int) []int {
	if r < 0 {
		r = k - 1
	}
	base := make([]int, k)
	for i := range base {
		base[i] = i
	}
	if k >= 3 && (r/k)%2 == 1 {
		slices.Reverse(base)
	}
	s := r % k
	return append(base[s:], base[:s]...)
}

// versusMake runs fresh deploys (of A, and B in A/B mode) and make -j back
// to back in each round, the order rotating from round to round so that no
// tool always runs first, on a cache the other one warmed, or right after
// the same other tool.
func versusMake(ctx context.Context, o options, dir string, c casegen.Case) (row, error) {
	if err := cleanGantry(o, dir); err != nil {
		return row{}, err
	}
	gs := o.gantries()
	k := len(gs) + 1 // make is the last
	rounds := make([][]sample, k)
	// Round -1 warms caches (binaries, the case's files) and is not counted.
	for r := -1; r < o.rounds; r++ {
		for _, t := range order(k, r) {
			var s sample
			var err error
			if t < len(gs) {
				if err := forgetState(dir); err != nil {
					return row{}, err
				}
				s, err = measure(ctx, o, dir, gs[t], "deploy", "--parallel", fmt.Sprint(o.parallel), "hub.yaml")
				if err == nil {
					s.lead, s.tail, s.phased = runPhases(dir, o.out.Name(), s.began, s.ended)
				}
			} else {
				s, err = measure(ctx, o, dir, "make", "-s", "-j", fmt.Sprint(o.parallel), "-f", "Makefile", "all")
			}
			if err != nil {
				return row{}, err
			}
			if r >= 0 {
				rounds[t] = append(rounds[t], s)
			}
		}
	}
	mk := rounds[k-1]
	rw := row{n: c.N, p: o.parallel, deploy: true, make: statsOf(mk)}
	for t := range gs {
		st := statsOf(rounds[t])
		st.vsMake = spreadOf(ratios(rounds[t], mk))
		st.body = spreadOf(bodyRatios(rounds[t], mk))
		diffs := make([]float64, len(mk))
		for i := range mk {
			diffs[i] = float64(rounds[t][i].wall-mk[i].wall) / float64(time.Millisecond) / float64(c.N)
		}
		st.cost = median(diffs)
		rw.gantries = append(rw.gantries, st)
	}
	if len(gs) == 2 {
		rw.bOverA = spreadOf(ratios(rounds[1], rounds[0]))
		rw.ownBOverA = spreadOf(ownRatios(rounds[1], rounds[0]))
	}
	return rw, nil
}

// ratios are the per-round ratios of a's wall times to b's.
func ratios(a, b []sample) []float64 {
	xs := make([]float64, len(a))
	for i := range a {
		xs[i] = float64(a[i].wall) / float64(b[i].wall)
	}
	return xs
}

// bodyRatios are the per-round ratios of a's body (its wall time without
// its lead and tail) to make's wall time; none when a round's phases were
// not read.
func bodyRatios(a, mk []sample) []float64 {
	var xs []float64
	for i := range a {
		if !a[i].phased {
			return nil
		}
		xs = append(xs, float64(a[i].wall-a[i].lead-a[i].tail)/float64(mk[i].wall))
	}
	return xs
}

// ownRatios are the per-round ratios of a's own CPU to b's; none when
// either did not report it.
func ownRatios(a, b []sample) []float64 {
	var xs []float64
	for i := range a {
		if a[i].own == 0 || b[i].own == 0 {
			return nil
		}
		xs = append(xs, float64(a[i].own)/float64(b[i].own))
	}
	return xs
}

// gantryRounds measures a gantry command (of A, and B in A/B mode,
// alternately) in dir, after an uncounted warm-up round; prepare(t) runs
// before each command of gantry t, unmeasured.
func gantryRounds(ctx context.Context, o options, dirs []string, n, p int, prepare func(t int) error, args ...string) (row, error) {
	gs := o.gantries()
	rounds := make([][]sample, len(gs))
	for r := -1; r < o.rounds; r++ {
		for _, t := range order(len(gs), r) {
			if err := prepare(t); err != nil {
				return row{}, err
			}
			s, err := measure(ctx, o, dirs[t], gs[t], args...)
			if err != nil {
				return row{}, err
			}
			if r >= 0 {
				rounds[t] = append(rounds[t], s)
			}
		}
	}
	rw := row{n: n, p: p}
	for t := range gs {
		rw.gantries = append(rw.gantries, statsOf(rounds[t]))
	}
	if len(gs) == 2 {
		rw.bOverA = spreadOf(ratios(rounds[1], rounds[0]))
		rw.ownBOverA = spreadOf(ownRatios(rounds[1], rounds[0]))
	}
	return rw, nil
}

// resume measures a redeploy with --resume of a deployed, unchanged stack:
// every component is skipped by its fingerprint. Each gantry resumes from
// the state its own deploy wrote, restored before every round, so that
// every round starts from the same state and A and B each read their own.
// With A/B each gantry has a copy of the case of its own: in one folder,
// each would find the other's elaborated file and write its own again
// every round (1.6 s of CPU at 10,000 components), which is not a resume.
func resume(ctx context.Context, o options, dir, name string, n int) (row, error) {
	if err := cleanGantry(o, dir); err != nil {
		return row{}, err
	}
	dirs := []string{dir}
	if o.ab() {
		b := dir + ".b"
		if err := setAside(o, b); err != nil {
			return row{}, err
		}
		if out, err := exec.CommandContext(ctx, "cp", "-a", dir, b).CombinedOutput(); err != nil {
			return row{}, fmt.Errorf("copy the case for B: %v: %s", err, out)
		}
		defer setAside(o, b)
		dirs = append(dirs, b)
	}
	saved := filepath.Join(o.work, ".states", name)
	if err := os.RemoveAll(saved); err != nil {
		return row{}, err
	}
	defer func() {
		os.RemoveAll(saved)
		os.Remove(filepath.Dir(saved)) // when empty
	}()
	for t, g := range o.gantries() {
		if err := forgetState(dirs[t]); err != nil {
			return row{}, err
		}
		if _, err := measure(ctx, o, dirs[t], g, "deploy", "--parallel", fmt.Sprint(o.parallel), "hub.yaml"); err != nil {
			return row{}, err
		}
		if err := copyState(dirs[t], filepath.Join(saved, fmt.Sprint(t))); err != nil {
			return row{}, err
		}
	}
	restore := func(t int) error {
		if err := removeState(dirs[t]); err != nil {
			return err
		}
		return copyState(filepath.Join(saved, fmt.Sprint(t)), dirs[t])
	}
	return gantryRounds(ctx, o, dirs, n, o.parallel, restore, "deploy", "--resume", "--parallel", fmt.Sprint(o.parallel), "hub.yaml")
}

// planOnly measures elaborate + lock + plan of a stack, from its hub.yaml.
func planOnly(ctx context.Context, o options, dir, name string, n int) (row, error) {
	return gantryRounds(ctx, o, []string{dir, dir}, n, 1, func(int) error { return forgetState(dir) }, "plan", "hub.yaml")
}

// planUndeploy measures the plan of the undeploy of a deployed stack: every
// component's dependents are checked against the state (3.6 s at 10,000
// components while that was a search of the state for each of them).
func planUndeploy(ctx context.Context, o options, dir, name string, n int) (row, error) {
	if err := cleanGantry(o, dir); err != nil {
		return row{}, err
	}
	if _, err := measure(ctx, o, dir, o.gantries()[0], "deploy", "--parallel", fmt.Sprint(o.parallel), "hub.yaml"); err != nil {
		return row{}, fmt.Errorf("deploy before planning its undeploy: %w", err)
	}
	return gantryRounds(ctx, o, []string{dir, dir}, n, 1, func(int) error { return nil }, "plan", "--verb", "undeploy", "hub.yaml")
}

// planOffset measures the plan of a deploy from the middle component on
// (-o, the Hub CLI's --offset, to go on after a failure): each selected
// component waits for the selected ones its unselected dependencies lead
// to (0.85 s at 10,000 while each walked through all of those before it).
func planOffset(ctx context.Context, o options, dir, name string, n int) (row, error) {
	offset := casegen.NodeName(n / 2)
	return gantryRounds(ctx, o, []string{dir, dir}, n, 1, func(int) error { return forgetState(dir) }, "plan", "-o", offset, "hub.yaml")
}

// cleanGantry removes everything gantry runs left in a case: its run
// folders are set aside (setAside), not deleted.
func cleanGantry(o options, dir string) error {
	if err := forgetState(dir); err != nil {
		return err
	}
	return setAside(o, filepath.Join(dir, ".gantry"))
}

// emptyTrash deletes what was set aside, once the rounds are over; the next
// run of the runner should start a few minutes later (bench/README.md).
func emptyTrash(o options) {
	if _, err := os.Stat(o.trash); err != nil || o.keepTrash {
		return
	}
	fmt.Fprintf(os.Stderr, "runner: deleting the run folders set aside in %s (wait five minutes before measuring again: ext4 without a journal creates files slowly after mass deletions)\n", o.trash)
	if err := os.RemoveAll(o.trash); err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
	}
}

// forgetState removes the state, so that the next run deploys every
// component. The run folders stay, as they do for users: deleting thousands
// of files just before a run would measure the filesystem (ext4 avoids
// reusing recently freed inodes, and creating files right after a mass
// deletion costs many times more).
func forgetState(dir string) error {
	if err := removeState(dir); err != nil {
		return err
	}
	return removeGlobs(dir, "hub.yaml.state.lock", "hub.yaml.elaborate", ".hub.yaml.elaborate.tmp*")
}

// removeState removes the state document, its journal and what an
// interrupted write of either left.
func removeState(dir string) error {
	return removeGlobs(dir, "hub.yaml.state", "hub.yaml.state.journal", "hub.yaml.state.journal.tmp*", ".hub.yaml.state.tmp*")
}

func removeGlobs(dir string, patterns ...string) error {
	for _, p := range patterns {
		matches, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyState copies the state document and its journal, where they exist,
// from one folder to another, synced so that the copy's write-back does not
// fall into the next measured run.
func copyState(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	copied := 0
	for _, f := range []string{"hub.yaml.state", "hub.yaml.state.journal"} {
		err := copyFile(filepath.Join(from, f), filepath.Join(to, f))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		copied++
	}
	if copied == 0 {
		return fmt.Errorf("no state in %s", from)
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// measure runs a command in dir and returns its wall time, CPU time and
// peak memory; a failure returns the end of its output.
func measure(ctx context.Context, o options, dir, name string, args ...string) (sample, error) {
	if err := o.out.Truncate(0); err != nil {
		return sample{}, err
	}
	if _, err := o.out.Seek(0, io.SeekStart); err != nil {
		return sample{}, err
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = o.out, o.out
	// gantry writes its own CPU here (GANTRY_RUSAGE); make ignores it.
	rusage := o.out.Name() + ".rusage"
	os.Remove(rusage)
	cmd.Env = append(os.Environ(), "GANTRY_RUSAGE="+rusage)
	start := time.Now()
	err := cmd.Run()
	end := time.Now()
	wall := end.Sub(start)
	if err != nil {
		tail, _ := os.ReadFile(o.out.Name())
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return sample{}, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail)
	}
	s := sample{wall: wall, began: start, ended: end}
	// The rusage of wait4: the command's own and that of the descendants it
	// waited for (make's and gantry's components).
	if ps := cmd.ProcessState; ps != nil {
		s.cpu = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			s.rss = ru.Maxrss
		}
	}
	if b, err := os.ReadFile(rusage); err == nil {
		var user, sys int64
		if _, err := fmt.Sscan(string(b), &user, &sys); err == nil {
			s.own = time.Duration(user+sys) * time.Microsecond
		}
	}
	return s, nil
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
