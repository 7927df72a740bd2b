package build

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
)

// PullSource is a component whose sources come from a Git repository:
// Dir is its folder (absolute), where gantry pull puts them.
type PullSource struct {
	Component string
	Pos       manifest.Pos
	Git       manifest.GitRepo
	Dir       string
	// FromGit says the stack gave no dir: Dir is the Hub's, SubDir of a
	// clone of the whole repository.
	FromGit bool
}

// PullOptions tune the plan of gantry pull.
type PullOptions struct {
	// Scratch is a folder for the clones whose sub-folders are placed in
	// components' folders.
	Scratch string
	// Force replaces folders that hold something other than what a pull put
	// there.
	Force bool
	// IsClone reports whether a folder is a Git clone already (updated, not
	// cloned again).
	IsClone func(dir string) bool
}

// PullPlan builds the plan of gantry pull: a clone step per repository and
// ref, and a place step per component folder that takes a sub-folder of one.
// A component without subDir is a clone of the whole repository in its
// folder, updated when it is one already. So is the Hub's layout for an
// entry with git and no dir (its folder is the sub-folder of a clone named
// after the component). Two components pulling different sources into one
// folder is an error.
func PullPlan(stack string, sources []PullSource, o PullOptions) (*plan.Plan, manifest.Diagnostics) {
	var diags manifest.Diagnostics
	p := plan.New(stack, "pull")
	type target struct {
		src PullSource
		id  string
	}
	targets := map[string]target{}
	clones := map[string]string{} // remote and ref -> clone step id
	addClone := func(s PullSource, into string, update bool) string {
		id := fmt.Sprintf("clone/%d", len(p.Nodes))
		label := "clone " + s.Git.Remote + refLabel(s.Git.Ref)
		if update {
			label = "update from " + s.Git.Remote + refLabel(s.Git.Ref)
		}
		p.Add(&plan.Node{ID: id, Kind: plan.KindClone, Label: label, Component: s.Component, Group: s.Component,
			Spec: plan.Clone{Remote: s.Git.Remote, Ref: s.Git.Ref, Into: into, Update: update}})
		return id
	}
	for _, s := range sources {
		dir, whole := s.Dir, s.Git.SubDir == ""
		if !whole && s.FromGit {
			// The Hub's layout: the whole clone, whose sub-folder is read.
			dir, whole = strings.TrimSuffix(filepath.Clean(s.Dir), string(filepath.Separator)+filepath.Clean(filepath.FromSlash(s.Git.SubDir))), true
		}
		if t, dup := targets[dir]; dup {
			if t.src.Git.Remote != s.Git.Remote || t.src.Git.Ref != s.Git.Ref || t.src.Git.SubDir != s.Git.SubDir {
				diags.Errorf(s.Pos, "source.git", "component %q pulls %s%s into %s, which component %q pulls %s%s into",
					s.Component, s.Git.Remote, refLabel(s.Git.Ref), dir, t.src.Component, t.src.Git.Remote, refLabel(t.src.Git.Ref))
			}
			continue
		}
		if whole {
			update := o.IsClone != nil && o.IsClone(dir)
			id := addClone(s, dir, update)
			if n := p.Node(id); !update {
				n.Spec = plan.Clone{Remote: s.Git.Remote, Ref: s.Git.Ref, Into: dir, Force: o.Force}
			}
			targets[dir] = target{src: s, id: id}
			continue
		}
		key := s.Git.Remote + "\x00" + s.Git.Ref
		cid, ok := clones[key]
		if !ok {
			cid = addClone(s, filepath.Join(o.Scratch, fmt.Sprint(len(clones))), false)
			// Shared by the components that take folders of it.
			n := p.Node(cid)
			n.Component, n.Group = "", "pull"
			clones[key] = cid
		}
		id := "place/" + s.Component
		p.Add(&plan.Node{ID: id, Kind: plan.KindPlace, Label: "place " + s.Git.SubDir + " from " + s.Git.Remote + refLabel(s.Git.Ref), Component: s.Component, Group: s.Component,
			Inputs: []string{cid},
			Spec: plan.Place{Component: s.Component, Clone: p.Node(cid).Spec.(plan.Clone).Into, Remote: s.Git.Remote, Ref: s.Git.Ref,
				SubDir: s.Git.SubDir, Dir: s.Dir, Force: o.Force}})
		if err := p.Connect(cid, id, plan.OnSuccess); err != nil {
			diags.Errorf(s.Pos, "source.git", "%v", err)
		}
		targets[dir] = target{src: s, id: id}
	}
	return p, diags
}

func refLabel(ref string) string {
	if ref == "" {
		return ""
	}
	return " (" + ref + ")"
}
