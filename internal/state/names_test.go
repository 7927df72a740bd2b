package state

import (
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
		`a\..\..\b`:               false,
		strings.Repeat("x", 1025): false,
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
