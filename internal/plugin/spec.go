package plugin

import (
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// Spec is one entry of a component's plugin list, resolved: what to run and
// its instance key (the name of its state folder; "" for keyless built-ins).
type Spec struct {
	Name     string   `json:"name"`
	Key      string   `json:"key,omitempty"`
	Path     string   `json:"path,omitempty"`
	Args     []string `json:"args,omitempty"`
	Config   any      `json:"config,omitempty"`
	Label    string   `json:"-"`
	OnFail   []string `json:"-"`
	Hidden   bool     `json:"-"`
	Children []*Spec  `json:"children,omitempty"`
	// Pos is where the manifest lists it, for the plan's messages; none
	// for a list the state recorded.
	Pos manifest.Pos `json:"-"`
}

// Specs converts manifest entries.
func Specs(entries []manifest.PluginEntry) []*Spec {
	if len(entries) == 0 {
		return nil
	}
	out := make([]*Spec, len(entries))
	for i := range entries {
		e := &entries[i]
		key, path := e.Instance()
		out[i] = &Spec{Name: e.Name, Key: key, Path: path, Args: append([]string(nil), e.Args...), Config: e.Config,
			Label: e.Label, OnFail: e.OnFail, Hidden: e.Hidden, Children: Specs(e.Children), Pos: e.Pos}
	}
	return out
}

// IsControl reports whether the spec is pinned, unpinned or parallel.
func (s *Spec) IsControl() bool { return manifest.IsControlPlugin(s.Name) }

// Keyed returns every spec with an instance key, depth first in list order.
func Keyed(specs []*Spec) []*Spec {
	var out []*Spec
	for _, s := range specs {
		if s.IsControl() {
			out = append(out, Keyed(s.Children)...)
		} else if s.Key != "" {
			out = append(out, s)
		}
	}
	return out
}

// At returns the spec at a position in a nested list: each index descends
// into the children of a control plugin.
func At(specs []*Spec, index []int) *Spec {
	var s *Spec
	for _, i := range index {
		if i < 0 || i >= len(specs) {
			return nil
		}
		s = specs[i]
		specs = s.Children
	}
	return s
}

// Title is the entry as the display heads it: "rec db", "rec --fast (db)":
// the plugin, its arguments, and its key unless they already show it.
func (s *Spec) Title() string {
	t := s.Name
	if len(s.Args) > 0 {
		t += " " + strings.Join(s.Args, " ")
	}
	if s.Key != "" && s.Key != s.Name && (len(s.Args) == 0 || !strings.HasPrefix(s.Args[0], s.Key)) {
		t += " (" + s.Key + ")"
	}
	return t
}

// InstanceName is the instance's name for folders and PLUGININSTANCE.
func (s *Spec) InstanceName() string {
	if s.Key != "" {
		return s.Key
	}
	return s.Name
}

// Reverses reports whether an action runs plugin lists backwards: delete and
// cleanup undo what deploy and prepare did, last first.
func Reverses(action string) bool { return action == ActionDelete || action == ActionCleanup }

// ChildNames are the lanes of parallel children: the instance key, else
// what a labeled plugin calls the entry, else the plugin name; numbered
// (from 1) where siblings would share one.
func ChildNames(children []*Spec) []string {
	names := make([]string, len(children))
	count := map[string]int{}
	for i, c := range children {
		names[i] = c.Key
		if names[i] == "" && !c.IsControl() {
			if p, ok := Lookup(c.Name); ok {
				if l, ok := p.(Labeled); ok {
					names[i] = l.EntryLabel("", c)
				}
			}
		}
		if names[i] == "" || c.IsControl() {
			names[i] = c.Name
		}
		count[names[i]]++
	}
	seen := map[string]int{}
	for i, n := range names {
		if count[n] > 1 {
			seen[n]++
			names[i] = fmt.Sprintf("%s-%d", n, seen[n])
		}
	}
	return names
}
