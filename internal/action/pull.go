package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/steps"
	"github.com/gantry-dev/gantry/internal/ui"
)

// Pull fetches the sources of a stack's components that come from Git
// (source.git), and of its base stacks', into their folders, as the Hub
// CLI's pull: a plan of clone and place steps run by the one executor.
type Pull struct {
	Stack    string
	Force    bool
	Parallel int
	// Display shows the steps as they run.
	Display plan.Observer
	Warn    func(manifest.Diagnostics)
}

// DefaultPullParallel is how many repositories a pull clones at once.
const DefaultPullParallel = 4

// Pulled is what a pull did.
type Pulled struct {
	Stack   string
	Folders int // component folders pulled
	Failed  int
	Plan    *plan.Plan
}

// Run carries out the pull.
func (p *Pull) Run(ctx context.Context) (*Pulled, error) {
	const consequence = "nothing was pulled"
	chain, diags := elaborate.StackChain(p.Stack)
	if err := diagsError(diags, consequence); err != nil {
		return nil, err
	}
	if p.Warn != nil && len(diags) > 0 {
		p.Warn(diags)
	}
	stack := chain[len(chain)-1]
	// A derived stack's entry replaces its base's, git or not.
	entries := map[string]build.PullSource{}
	var names []string
	var keep []string
	for _, s := range chain {
		root := absJoin(filepath.Dir(s.File), ".")
		keep = append(keep, absJoin(root, filepath.Base(s.File)), absJoin(root, DefaultStatePath(filepath.Base(s.File))), absJoin(root, ".gantry"))
		for _, ref := range s.Components {
			if _, seen := entries[ref.Name]; !seen {
				names = append(names, ref.Name)
			}
			src := build.PullSource{Component: ref.Name, Pos: ref.Source.Pos, Root: root}
			if ref.Source.Git != nil {
				src.Git, src.Dir, src.FromGit = *ref.Source.Git, absJoin(root, ref.Source.Dir), ref.Source.FromGit
			}
			entries[ref.Name] = src
		}
	}
	var sources []build.PullSource
	for _, n := range names {
		if e := entries[n]; e.Git.Remote != "" {
			sources = append(sources, e)
		}
	}
	out := &Pulled{Stack: stack.Meta.Name}
	if len(sources) == 0 {
		return out, nil
	}
	scratch, err := os.MkdirTemp("", "gantry-pull-")
	if err != nil {
		return nil, fmt.Errorf("make a folder for the clones: %w", err)
	}
	defer os.RemoveAll(scratch)
	pl, diags := build.PullPlan(stack.Meta.Name, sources, build.PullOptions{Scratch: scratch, Force: p.Force, Keep: keep, IsClone: isClone})
	if err := diagsError(diags, consequence); err != nil {
		return nil, err
	}
	out.Plan = pl
	parallel := p.Parallel
	if parallel < 1 {
		parallel = DefaultPullParallel
	}
	display := ui.NewAsync(p.Display)
	eo, err := engine.Run(ctx, pl, &steps.Runtime{}, engine.Options{Parallel: parallel, Force: true, Observer: display})
	display.Close()
	if err != nil {
		return nil, err
	}
	for _, n := range pl.Nodes {
		// A folder is pulled by a place step, or by a clone step of its own
		// (shared clones have no component).
		if n.Kind == plan.KindPlace || (n.Kind == plan.KindClone && n.Component != "") {
			out.Folders++
			if eo.Results[n.ID].Status != plan.OK {
				out.Failed++
			}
		}
	}
	if eo.Cancelled {
		return out, errors.New("interrupted")
	}
	if out.Failed > 0 {
		return out, fmt.Errorf("%d of %d component folders were not pulled", out.Failed, out.Folders)
	}
	return out, nil
}

func absJoin(base, dir string) string {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(base, dir)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// isClone reports whether dir is a Git clone (its own, not a folder inside
// one).
func isClone(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil && (fi.IsDir() || fi.Mode().IsRegular())
}
