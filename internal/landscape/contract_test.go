package landscape

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/plugin"
)

// TestRunnerRefusesKeysLeadingOut: a key known only when the run
// evaluates the list, or read from plugins.json for a vanished instance,
// is refused before gantry creates its folder or runs the plugin.
func TestRunnerRefusesKeysLeadingOut(t *testing.T) {
	root := t.TempDir()
	land := filepath.Join(root, "land")
	dir := filepath.Join(land, "crop", "components", "a")
	exe := filepath.Join(land, "crop", "plugins", "p", "plugin")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nmkdir -p \"$GENDIR/$PLUGININSTANCE\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	crop := &Product{Name: mainProduct, Dir: filepath.Join(land, "crop")}
	var out bytes.Buffer
	r := &runner{l: &Landscape{Root: land}, c: &Component{Name: "a", Dir: dir, Product: crop}, action: "delete",
		doc: map[string]any{}, stdout: &out, stderr: &out, record: func(string, string, map[string]any) error { return nil }}
	for _, c := range []*call{
		{Name: "p", Args: []string{"../../../outside:"}}, // a list entry, by one
		{Name: "p", Key: "../../../outside"},             // a vanished instance, by external
	} {
		var err error
		if c.Key == "" {
			err = r.one(context.Background(), c)
		} else {
			err = r.external(context.Background(), c)
		}
		if err == nil || !strings.Contains(err.Error(), "stays inside the component's folders") {
			t.Errorf("%+v: got %v", c, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "outside")); err == nil {
		t.Error("a folder was created outside the landscape")
	}
}

// TestSetupRunsOnlyThePlannedEntry: an entry of component.plugins that is
// no longer the one the plan showed (another plugin or instance there)
// fails before anything is written or run.
func TestSetupRunsOnlyThePlannedEntry(t *testing.T) {
	land := t.TempDir()
	dir := filepath.Join(land, "crop", "components", "a")
	crop := &Product{Name: mainProduct, Dir: filepath.Join(land, "crop")}
	c := &Component{Name: "a", Dir: dir, Product: crop, Meta: []byte(`{"component":{"plugins":[{"p":"k2"},"echo"]}}`)}
	var out bytes.Buffer
	for _, cfg := range []config{
		{At: []int{0}, Name: "p", Key: "k1", Phase: "prepare"},
		{At: []int{0}, Name: "q", Key: "k2", Phase: "prepare"},
		{At: []int{1}, Name: "fail", Phase: "prepare"},
	} {
		w := &work{l: &Landscape{Root: land}, c: c, cfg: &cfg, call: &plugin.Call{Action: "deploy", Stdout: &out, Stderr: &out}}
		if err := w.setup(context.Background()); err == nil || !strings.Contains(err.Error(), "the plan runs "+title(cfg.Name, cfg.Key)+" there") {
			t.Errorf("%+v: got %v", cfg, err)
		}
	}
	if _, err := os.Stat(filepath.Join(land, "gen")); err == nil {
		t.Error("gen/ was written")
	}
}
