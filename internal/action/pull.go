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
	var sources []build.PullSource
	index := map[string]int{}
	for _, s := range chain {
		base := filepath.Dir(s.File)
		for _, ref := range s.Components {
			if ref.Source.Git == nil {
				continue
			}
			src := build.PullSource{Component: ref.Name, Pos: ref.Source.Pos, Git: *ref.Source.Git,
				Dir: absJoin(base, ref.Source.Dir), FromGit: ref.Source.FromGit}
			if i, ok := index[ref.Name]; ok { // a derived stack's entry wins
				sources[i] = src
				continue
			}
			index[ref.Name] = len(sources)
			sources = append(sources, src)
		}
	}
	out := &Pulled{Stack: stack.Meta.Name}
	if len(sources) == 0 {
		return out, nil
	}
	scratch, err := os.MkdirTemp("", "gantry-pull-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	pl, diags := build.PullPlan(stack.Meta.Name, sources, build.PullOptions{Scratch: scratch, Force: p.Force, IsClone: isClone})
	if err := diagsError(diags, consequence); err != nil {
		return nil, err
	}
	out.Plan = pl
	parallel := p.Parallel
	if parallel < 1 {
		parallel = 4
	}
	display := ui.NewAsync(p.Display)
	eo, err := engine.Run(ctx, pl, &steps.Runtime{}, engine.Options{Parallel: parallel, Force: true, Observer: display})
	display.Close()
	if err != nil {
		return nil, err
	}
	for _, n := range pl.Nodes {
		if n.Kind == plan.KindPlace || n.Kind == plan.KindClone && n.Component != "" {
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
