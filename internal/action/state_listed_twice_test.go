package action

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/gantry-dev/gantry/internal/state/pgstate" // postgres:// locations
)

// TestOpenStateListedTwice: an -s list naming one state twice, however its
// locations are spelt, is invalid input (the run would find the second
// lock held by itself); different states are taken.
func TestOpenStateListedTwice(t *testing.T) {
	dir, real, st := linkedStateDir(t)
	tests := []struct {
		name  string
		list  string
		twice bool
	}{
		{"the same path", st + "," + st, true},
		{"file:// and a path", "file://" + st + "," + st, true},
		{"through a link", st + "," + filepath.Join(dir, "link", "hub.yaml.state"), true},
		{"not written yet, through a link", filepath.Join(real, "new.state") + "," + filepath.Join(dir, "link", "new.state"), true},
		{"the first and the third", st + "," + filepath.Join(real, "other.state") + "," + filepath.Join(dir, "link", "..", "stack", "hub.yaml.state"), true},
		{"one database spelt two ways", st + ",postgres://a:pw@db.example/gantry?sslmode=disable,postgres://b@db.example:5432/gantry", true},
		{"two files", st + "," + filepath.Join(real, "other.state"), false},
		{"two databases", st + ",postgres://db.example/one,postgres://db.example/two", false},
		{"one database on two servers", st + ",postgres://db1.example/gantry,postgres://db2.example/gantry", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, _, err := OpenState(tt.list, "", "app")
			if store != nil {
				defer store.Close()
			}
			var ie *InvalidError
			switch {
			case tt.twice && (!errors.As(err, &ie) || !strings.Contains(err.Error(), "lists one state twice")):
				t.Errorf("OpenState(%q) = %v, want it refused as listing one state twice", tt.list, err)
			case !tt.twice && err != nil:
				t.Errorf("OpenState(%q) = %v, want it taken", tt.list, err)
			}
		})
	}
}
