package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// keeperPlugin is a built-in of lists that keeps data in its STATEDIR, as
// terraform does.
type keeperPlugin struct{}

func (keeperPlugin) Actions() []string                       { return nil }
func (keeperPlugin) Validate(string, map[string]any) error   { return nil }
func (keeperPlugin) Run(context.Context, *plugin.Call) error { return nil }
func (keeperPlugin) KeepsData()                              {}

func init() { plugin.Register("test-keeper", keeperPlugin{}, plugin.ForLists) }

func TestEntryKeepsData(t *testing.T) {
	tests := []struct {
		entry plan.Entry
		want  bool
	}{
		{plan.Entry{Plugin: "tf", Source: "/stack/plugins/tf/plugin"}, true},
		{plan.Entry{Plugin: "echo", Source: "/stack/plugins/echo/plugin"}, true}, // an executable replaces the built-in
		{plan.Entry{Plugin: "test-keeper", Source: plan.SourceBuiltin}, true},
		{plan.Entry{Plugin: "echo", Source: plan.SourceBuiltin}, false},
		{plan.Entry{Plugin: "gate", Source: plan.SourceBuiltin}, false},
		{plan.Entry{Plugin: "nowhere", Source: plan.SourceBuiltin}, false},
	}
	for _, tc := range tests {
		if got := entryKeepsData(tc.entry); got != tc.want {
			t.Errorf("%s from %s: %v, want %v", tc.entry.Plugin, tc.entry.Source, got, tc.want)
		}
	}
}

// A folder an earlier gantry left unmarked, beside a deployment whose state
// records its id but no plugin instances of the component, is refused
// before anything runs: every component so refused, and only those whose
// plugins keep data; a component its begin may skip (a requirement not met
// at the start) and a first deploy (no id recorded yet) are left to the
// step.
func TestPluginDataRefusals(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".gantry")
	ws := workspace.Workspace{Root: root}
	for _, c := range []string{"a", "b", "c", "d", "e"} {
		// Each holds an instance's data, and no owner mark.
		if err := os.MkdirAll(filepath.Join(ws.StateRoot(c), "db"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := plan.New("s", plan.VerbDeploy)
	entry := func(comp, plug, source string) {
		p.Components[comp] = &plan.Component{Name: comp, Verb: plan.VerbDeploy, Plugins: true}
		p.Add(&plan.Node{ID: comp + "/" + plug, Component: comp, Spec: plan.Entry{Component: comp, Plugin: plug, Source: source, Key: "db"}})
	}
	entry("a", "tf", "/x/plugins/tf/plugin") // refused
	entry("b", "echo", plan.SourceBuiltin)   // keeps no data
	entry("c", "test-keeper", plan.SourceBuiltin)
	entry("d", "tf", "/x/plugins/tf/plugin") // its state records its instances
	entry("e", "tf", "/x/plugins/tf/plugin") // may be skipped: its begin decides
	comp := func(name string, requires ...string) *manifest.Component {
		c := &manifest.Component{Requires: requires}
		c.Meta.Name = name
		return c
	}
	stack := &manifest.Stack{}
	stack.Lifecycle.Requires.Optional = []string{"vault:e"}
	res := &elaborate.Result{Stack: stack, Components: []*manifest.Component{comp("a"), comp("b"), comp("c"), comp("d"), comp("e", "vault")}}
	const id = "0123456789abcdef"
	before := &state.State{DeploymentID: id, Components: map[string]*state.Component{
		"d": {Status: state.StatusDeployed, Plugins: []state.PluginInstance{{Key: "db", Name: "tf"}}},
	}}
	locked := &params.Locked{DeploymentID: id}
	rt := &Runtime{Plan: p, Res: res, Dirs: ws, Before: before, Locked: locked, StatePath: "/w/x.state", Provides: NewCapabilities()}
	err := rt.PluginDataRefusals()
	if err == nil {
		t.Fatal("no refusal")
	}
	msg := err.Error()
	for _, want := range []string{"component a: plugin data: .gantry/state/a was left unmarked", "component c: plugin data: .gantry/state/c was left unmarked", "adopt it: mv "} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal lacks %q:\n%s", want, msg)
		}
	}
	for _, not := range []string{"component b", "component d", "component e"} {
		if strings.Contains(msg, not) {
			t.Errorf("refusal names %q:\n%s", not, msg)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "state")); len(entries) != 5 {
		t.Errorf("the check changed the folder: %v", entries)
	}

	// A first deploy: its id is not recorded yet.
	rt = &Runtime{Plan: p, Res: res, Dirs: ws, Locked: &params.Locked{DeploymentID: id}, StatePath: "/w/x.state", Provides: NewCapabilities()}
	if err := rt.PluginDataRefusals(); err != nil {
		t.Errorf("a first deploy: %v", err)
	}
}
