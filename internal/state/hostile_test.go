package state

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestValidComponentName: a name read from a state names folders and
// files below the workspace's: a manifest's component name or a sow
// component's path, never one that leaves the folder it is joined to.
func TestValidComponentName(t *testing.T) {
	for name, want := range map[string]bool{
		"app":                     true,
		"web.db":                  true,
		"store/db":                true,
		"my comp":                 true,
		"a..b":                    true,
		"":                        false,
		".":                       false,
		"..":                      false,
		"../x":                    false,
		"a/../../x":               false,
		"a/../b":                  false,
		"/etc":                    false,
		"a/":                      false,
		"a//b":                    false,
		"./a":                     false,
		"a\x00b":                  false,
		`a\..\..\b`:               true, // one name on Linux, as a sow folder may be
		strings.Repeat("x", 4097): false,
	} {
		if got := ValidComponentName(name); got != want {
			t.Errorf("ValidComponentName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestDecodeRefusesAComponentNameThatLeavesTheWorkspace: a state whose
// component name would make gantry remove a folder outside its workspace
// (.gantry/gen/<name> once undeployed) is refused where the name is.
func TestDecodeRefusesAComponentNameThatLeavesTheWorkspace(t *testing.T) {
	for _, key := range []string{`"../../victim"`, `..`, `'/tmp/x'`} {
		doc := "version: 1\nstack: s\ncomponents:\n  app:\n    status: deployed\n  " + key + ":\n    status: deployed\n"
		_, err := Decode("s.state", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), "s.state:6:3: state s.state is not valid: the component name ") {
			t.Errorf("%s: error %v, want it refused at 6:3", key, err)
		}
	}
}

// TestDecodeRefusesAnchorsAndAliases: a state holds no anchor nor alias
// (gantry never writes one): one is refused where it is, before the decoder
// expands it — a kilobyte of nested aliases took gigabytes. So is one in a
// Hub CLI state.
func TestDecodeRefusesAnchorsAndAliases(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nstack: s\nparameters:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	_, err := Decode("s.state", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "s.state:4:7: the state is not valid: an anchor (&…)") {
		t.Errorf("error %v, want the anchor refused at 4:7", err)
	}
	_, err = Decode("s.state", []byte("version: 1\nstack: s\ncomponents:\n  app:\n    status: deployed\n    outputs: *x\n"))
	if err == nil || !strings.Contains(err.Error(), "s.state:6:14: the state is not valid: an alias (*…)") {
		t.Errorf("error %v, want the alias refused at 6:14", err)
	}
	_, err = DecodeHub("p.state", []byte("kind: state\nstackParameters:\n  - name: p\n    value: &v [a]\n"))
	if err == nil || !strings.Contains(err.Error(), "p.state:4:12:") || !strings.Contains(err.Error(), "an anchor (&…)") {
		t.Errorf("hub state: error %v, want the anchor refused at 4:12", err)
	}
}

// TestRecorderNeverWritesAStateTooLargeToRead: a state that would be longer
// than the readers take (parameters or outputs far too large) is not
// written: the write fails saying why, and the last state written stays,
// readable — a deploy left a 320 MiB state that no undeploy could read.
func TestRecorderNeverWritesAStateTooLargeToRead(t *testing.T) {
	lowerMaxSnapshot(t, 4<<10)
	path := filepath.Join(t.TempDir(), "hub.yaml.state")
	r := NewRecorder(path, New("demo"))
	if err := r.Wait(r.UpdateComponent("small", func(c *Component) { c.Status = StatusDeployed })); err != nil {
		t.Fatal(err)
	}
	v := r.UpdateComponent("big", func(c *Component) {
		c.Status = StatusDeployed
		c.Outputs = map[string]string{"blob": strings.Repeat("x", 8<<10)}
	})
	if err := r.Wait(v); err == nil || !strings.Contains(err.Error(), "more than the 4 KiB gantry reads back, so it is not written") {
		t.Errorf("write of a state too large: %v", err)
	}
	if err := r.Close(); err == nil {
		t.Error("close wrote a state too large to read")
	}
	st, err := ReadFile(path)
	if err != nil {
		t.Fatalf("the last state written is not readable: %v", err)
	}
	if st.Components["small"] == nil || st.Components["big"] != nil {
		t.Errorf("read back %v, want the state before the large write", slices.Sorted(maps.Keys(st.Components)))
	}
}

// TestFirstJournalWriteBounded: the first write of a run on a state that
// exists starts a journal beside its snapshot; one too long to read back
// goes into a whole snapshot instead, and fails when that is too long
// too, the state as it was staying readable (review 57b: the first batch
// of a journal was not bounded).
func TestFirstJournalWriteBounded(t *testing.T) {
	lowerMaxSnapshot(t, 4<<10)
	path := filepath.Join(t.TempDir(), "hub.yaml.state")
	first := NewRecorder(path, New("demo"))
	first.UpdateComponent("small", func(c *Component) { c.Status = StatusDeployed })
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	r := recordFromFile(t, path)
	r.UpdateStack(func(s *State) { s.Parameters = map[string]string{"blob": strings.Repeat("x", 8<<10)} })
	if err := r.Flush(); err == nil || !strings.Contains(err.Error(), "gantry reads back, so it is not written") {
		t.Errorf("first write of a state too large: %v", err)
	}
	_ = r.Close()
	back, err := ReadFile(path)
	if err != nil {
		t.Fatalf("the state as it was is not readable: %v", err)
	}
	if back.Components["small"] == nil || back.Parameters["blob"] != "" {
		t.Errorf("read back %+v, want the state as it was", back)
	}
}

// lowerMaxSnapshot lowers the length of the longest state written for the
// test, so that a state too long is a few kilobytes.
func lowerMaxSnapshot(t *testing.T, n int) {
	old := maxSnapshot
	maxSnapshot = n
	t.Cleanup(func() { maxSnapshot = old })
}
