package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/gantry-dev/gantry/bench/casegen"
)

// ttyDisplay measures what the live display costs a run: the same no-op
// deploy of n components, with its output in a file (the plain display)
// and on a pseudo-terminal of 120×40 that a reader drains as a terminal
// would (the live display), back to back in each round, the order
// rotating. It prints the per-round ratio (terminal / file).
func ttyDisplay(ctx context.Context, o options, n int) error {
	dir := filepath.Join(o.work, fmt.Sprintf("noop-random-%d", n))
	if _, err := casegen.Generate(dir, "random", n, 1, "noop"); err != nil {
		return err
	}
	if err := cleanGantry(o, dir); err != nil {
		return err
	}
	args := []string{"deploy", "--parallel", fmt.Sprint(o.parallel), "hub.yaml"}
	var plain, tty []sample
	var written []float64
	for r := -1; r < o.rounds; r++ {
		for _, t := range order(2, r) {
			if err := forgetState(dir); err != nil {
				return err
			}
			var s sample
			var err error
			var bytes int64
			if t == 0 {
				s, err = measure(ctx, o, dir, o.gantry, args...)
			} else {
				s, bytes, err = measureOnTerminal(ctx, dir, o.gantry, args...)
			}
			if err != nil {
				return err
			}
			if r < 0 {
				continue
			}
			if t == 0 {
				plain = append(plain, s)
			} else {
				tty = append(tty, s)
				written = append(written, float64(bytes))
			}
		}
	}
	ps, ts := statsOf(plain), statsOf(tty)
	fmt.Printf("# display, no-op random-%d, P=%d, %d rounds: plain (a file) %s ms, %s ms CPU; live (a terminal) %s ms, %s ms CPU (medians); terminal/file %s; %.0f KB written to the terminal\n",
		n, o.parallel, o.rounds, ms(ps.wall), ms(ps.cpu), ms(ts.wall), ms(ts.cpu), spreadOf(ratios(tty, plain)), median(written)/1024)
	fmt.Printf("tty_over_plain=%.3f\n", spreadOf(ratios(tty, plain)).med)
	return nil
}

// measureOnTerminal runs a command in dir on a new pseudo-terminal whose
// output is read and dropped as fast as it comes, and returns what measure
// does, and how many bytes the command wrote to the terminal.
func measureOnTerminal(ctx context.Context, dir, name string, args ...string) (sample, int64, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	start := time.Now()
	term, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		return sample{}, 0, err
	}
	defer term.Close()
	var tail strings.Builder
	read := make(chan int64)
	go func() {
		// What a terminal does: take everything, keep nothing (but the
		// end, for an error).
		var total int64
		buf := make([]byte, 32<<10)
		for {
			k, err := term.Read(buf)
			total += int64(k)
			if tail.Len() < 4096 {
				tail.Write(buf[:k])
			}
			if err != nil {
				read <- total
				return
			}
		}
	}()
	err = cmd.Wait()
	wall := time.Since(start)
	total := <-read // the terminal reads EIO once the command and its children are gone
	if err != nil {
		return sample{}, 0, fmt.Errorf("%s %s on a terminal: %w\n%s", name, strings.Join(args, " "), err, tail.String())
	}
	s := sample{wall: wall}
	if ps := cmd.ProcessState; ps != nil {
		s.cpu = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			s.rss = ru.Maxrss
		}
	}
	return s, total, nil
}
