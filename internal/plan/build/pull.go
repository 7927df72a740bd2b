package build

import (
	"fmt"
	"path/filepath"
	"sort"
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
	// Root is the folder of the stack that lists the component: pull
	// changes nothing outside it.
	Root string
}

// PullOptions tune the plan of gantry pull.
type PullOptions struct {
	// Scratch is a folder for the clones whose sub-folders are placed in
	// components' folders.
	Scratch string
	// Force replaces folders that hold something other than what a pull put
	// there.
	Force bool
	// Keep are files pull must never remove or replace: the stack files,
	// params files and the state; a folder holding one is no target.
	Keep []string
	// IsClone reports whether a folder is a Git clone already (updated, not
	// cloned again).
	IsClone func(dir string) bool
}

// PullPlan builds the plan of gantry pull: a clone step per repository and
// ref, and a place step per component folder that takes a sub-folder of one.
// A component without subDir is a clone of the whole repository in its
// folder, updated when it is one already. So is the Hub's layout for an
// entry with git and no dir (its folder is the sub-folder of a clone named
// after the component).
//
// A target must lie inside the folder of the stack that lists it, must not
// be that folder nor hold any file of Keep, and must not be inside another
// target: pull replaces targets whole.
func PullPlan(stack string, sources []PullSource, o PullOptions) (*plan.Plan, manifest.Diagnostics) {
	var diags manifest.Diagnostics
	p := plan.New(stack, "pull")
	targets := map[string]PullSource{}
	clones := map[string]string{} // remote and ref -> clone step id
	addClone := func(s PullSource, into string, update bool) string {
		id := fmt.Sprintf("clone/%d", len(p.Nodes))
		label := "clone " + plan.RemoteText(s.Git.Remote) + plan.RefText(s.Git.Ref)
		if update {
			label = "update from " + plan.RemoteText(s.Git.Remote) + plan.RefText(s.Git.Ref)
		}
		p.Add(&plan.Node{ID: id, Kind: plan.KindClone, Label: label, Component: s.Component, Group: s.Component,
			Spec: plan.Clone{Remote: s.Git.Remote, Ref: s.Git.Ref, Into: into, Update: update, Force: o.Force && !update}})
		return id
	}
	for _, s := range sources {
		dir, whole := filepath.Clean(s.Dir), s.Git.SubDir == ""
		if !whole && s.FromGit {
			// The Hub's layout: the whole clone, whose sub-folder is read.
			dir, whole = strings.TrimSuffix(dir, string(filepath.Separator)+filepath.Clean(filepath.FromSlash(s.Git.SubDir))), true
		}
		if t, dup := targets[dir]; dup {
			if t.Git.Remote != s.Git.Remote || t.Git.Ref != s.Git.Ref || t.Git.SubDir != s.Git.SubDir {
				diags.Errorf(s.Pos, "source.git", "component %q pulls %s%s into %s, which component %q pulls %s%s into",
					s.Component, plan.RemoteText(s.Git.Remote), plan.RefText(s.Git.Ref), dir, t.Component, plan.RemoteText(t.Git.Remote), plan.RefText(t.Git.Ref))
			}
			continue
		}
		if why := unsafeTarget(dir, s.Root, o.Keep); why != "" {
			diags.Errorf(s.Pos, "source", "component %q: gantry pull does not replace %s: %s", s.Component, dir, why)
			continue
		}
		targets[dir] = s
		if whole {
			addClone(s, dir, o.IsClone != nil && o.IsClone(dir))
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
		p.Add(&plan.Node{ID: id, Kind: plan.KindPlace, Label: "place " + s.Git.SubDir + " from " + plan.RemoteText(s.Git.Remote) + plan.RefText(s.Git.Ref),
			Component: s.Component, Group: s.Component, Inputs: []string{cid},
			Spec: plan.Place{Component: s.Component, Clone: p.Node(cid).Spec.(plan.Clone).Into, Remote: s.Git.Remote, Ref: s.Git.Ref,
				SubDir: s.Git.SubDir, Dir: dir, Force: o.Force}})
		if err := p.Connect(cid, id, plan.OnSuccess); err != nil {
			diags.Errorf(s.Pos, "source.git", "%v", err)
		}
	}
	nestedTargets(targets, &diags)
	return p, diags
}

// unsafeTarget says why pull must not replace dir, or "".
func unsafeTarget(dir, root string, keep []string) string {
	rel, err := filepath.Rel(root, dir)
	switch {
	case err != nil || !filepath.IsLocal(rel):
		return "it is outside the stack's folder " + root
	case rel == ".":
		return "it is the stack's folder"
	}
	for _, k := range keep {
		if r, err := filepath.Rel(dir, k); err == nil && filepath.IsLocal(r) {
			return "it holds " + k
		}
	}
	return ""
}

// nestedTargets reports a target inside another: replacing the outer one
// would remove what the inner one placed.
func nestedTargets(targets map[string]PullSource, diags *manifest.Diagnostics) {
	dirs := make([]string, 0, len(targets))
	for d := range targets {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for i, outer := range dirs {
		for _, inner := range dirs[i+1:] {
			if r, err := filepath.Rel(outer, inner); err == nil && filepath.IsLocal(r) {
				s := targets[inner]
				diags.Errorf(s.Pos, "source", "component %q is pulled into %s, inside %s where component %q is pulled: one would replace the other",
					s.Component, inner, outer, targets[outer].Component)
			}
		}
	}
}
