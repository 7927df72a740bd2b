package landscape

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
