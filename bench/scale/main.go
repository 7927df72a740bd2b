// Command scale deploys, plans and undeploys the stacks of package
// scalecase at two or more sizes with one gantry, or two side by side (A/B,
// alternating), and prints each one's cost per component at each size: a
// cost per component that grows with the size is a cost quadratic
// somewhere (bench/README.md, "Scale scan").
//
//	go run ./bench/scale -gantry A [-gantry-b B] [-sizes 1000,4000] [-shapes params,secrets]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/bench/scalecase"
)

type tool struct{ label, path string }

// sample is one command's wall time and gantry's own CPU time.
type sample struct{ wall, cpu time.Duration }

func main() {
	a := flag.String("gantry", "", "the gantry binary to measure (A)")
	b := flag.String("gantry-b", "", "a second gantry, measured in the same rounds (B)")
	labelB := flag.String("label-b", "B", "what to call the second gantry")
	sizes := flag.String("sizes", "1000,4000", "stack sizes, comma-separated, smallest first")
	shapes := flag.String("shapes", strings.Join(scalecase.Shapes, ","), "stacks to run")
	work := flag.String("work", "bench/.work/scale", "folder for the stacks")
	parallel := flag.Int("parallel", 8, "--parallel of the deploys")
	stateURL := flag.String("state", "", "a state location for every command (-s), e.g. a PostgreSQL URL (where the stacks' states stay: a deploy after the first finds its stack undeployed); the default is the state file next to each stack, removed before each deploy")
	flag.Parse()
	if *a == "" {
		fmt.Fprintln(os.Stderr, "usage: scale -gantry A [-gantry-b B] [-sizes 1000,4000] [-shapes ...]")
		os.Exit(2)
	}
	tools := []tool{{"A", *a}}
	if *b != "" {
		tools = append(tools, tool{*labelB, *b})
	}
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 10 {
			fmt.Fprintf(os.Stderr, "scale: -sizes: %q is not a size of at least 10\n", s)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	slices.Sort(ns)
	if err := run(tools, ns, strings.Split(*shapes, ","), *work, *parallel, *stateURL); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run(tools []tool, ns []int, shapes []string, work string, parallel int, stateURL string) error {
	var st []string
	if stateURL != "" {
		st = []string{"-s", stateURL}
	}
	trash := filepath.Join(work, ".trash")
	fmt.Printf("%-10s %6s %-6s %9s %9s %9s %9s %12s\n", "shape", "n", "tool", "deploy_s", "cpu_s", "plan_s", "undepl_s", "deploy_ms/c")
	perComp := map[string]map[int]float64{} // shape/tool -> n -> deploy ms per component
	for _, shape := range shapes {
		for _, n := range ns {
			dir := filepath.Join(work, fmt.Sprintf("%s-%d", shape, n))
			// An earlier scan's run folders go aside first, not with the
			// case: thousands of files.
			if err := setAside(filepath.Join(dir, ".gantry"), trash); err != nil {
				return err
			}
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			if err := scalecase.Generate(dir, shape, n); err != nil {
				return err
			}
			for _, t := range tools {
				// Run folders are moved aside, not deleted: creating files
				// right after deleting thousands is slow on ext4.
				if err := setAside(filepath.Join(dir, ".gantry"), trash); err != nil {
					return err
				}
				for _, f := range []string{"hub.yaml.state", "hub.yaml.state.journal", "hub.yaml.elaborate"} {
					os.Remove(filepath.Join(dir, f))
				}
				p := strconv.Itoa(parallel)
				dep, err := measure(dir, t.path, slices.Concat([]string{"deploy", "--parallel", p}, st, []string{"hub.yaml"})...)
				if err != nil {
					return fmt.Errorf("%s-%d, %s deploy: %w", shape, n, t.label, err)
				}
				plan, err := measure(dir, t.path, slices.Concat([]string{"plan"}, st, []string{"hub.yaml"})...)
				if err != nil {
					return fmt.Errorf("%s-%d, %s plan: %w", shape, n, t.label, err)
				}
				und, err := measure(dir, t.path, slices.Concat([]string{"undeploy", "--yes", "--parallel", p}, st, []string{"hub.yaml"})...)
				if err != nil {
					return fmt.Errorf("%s-%d, %s undeploy: %w", shape, n, t.label, err)
				}
				ms := float64(dep.wall.Milliseconds()) / float64(n)
				key := shape + "/" + t.label
				if perComp[key] == nil {
					perComp[key] = map[int]float64{}
				}
				perComp[key][n] = ms
				fmt.Printf("%-10s %6d %-6s %9.2f %9.2f %9.2f %9.2f %12.3f\n", shape, n, t.label,
					dep.wall.Seconds(), dep.cpu.Seconds(), plan.wall.Seconds(), und.wall.Seconds(), ms)
			}
		}
	}
	// The growth of the cost per component from the smallest size to the
	// largest: about 1 when it does not depend on the size.
	for _, shape := range shapes {
		for _, t := range tools {
			m := perComp[shape+"/"+t.label]
			lo, hi := ns[0], ns[len(ns)-1]
			if m[lo] > 0 && lo != hi {
				fmt.Printf("growth %s %s: deploy per component at %d / at %d = %.2f\n", shape, t.label, hi, lo, m[hi]/m[lo])
			}
		}
	}
	fmt.Fprintf(os.Stderr, "scale: the run folders are in %s; delete it, then wait five minutes before measuring again (ext4 creates files slowly after mass deletions)\n", trash)
	return nil
}

// measure runs gantry in dir and returns its wall time and own CPU time
// (GANTRY_RUSAGE); a failure shows the end of its output.
func measure(dir, gantry string, args ...string) (sample, error) {
	rusage, err := os.CreateTemp("", "scale-rusage-")
	if err != nil {
		return sample{}, err
	}
	rusage.Close()
	defer os.Remove(rusage.Name())
	cmd := exec.Command(gantry, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GANTRY_RUSAGE="+rusage.Name())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		tail := out
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return sample{}, fmt.Errorf("%v: %s", err, tail)
	}
	s := sample{wall: wall}
	if b, err := os.ReadFile(rusage.Name()); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 2 {
			u, _ := strconv.ParseInt(f[0], 10, 64)
			sys, _ := strconv.ParseInt(f[1], 10, 64)
			s.cpu = time.Duration(u+sys) * time.Microsecond
		}
	}
	return s, nil
}

// setAside moves path, when it exists, into a new folder under trash.
func setAside(path, trash string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.MkdirAll(trash, 0o755); err != nil {
		return err
	}
	to, err := os.MkdirTemp(trash, "runs-")
	if err != nil {
		return err
	}
	return os.Rename(path, filepath.Join(to, ".gantry"))
}
