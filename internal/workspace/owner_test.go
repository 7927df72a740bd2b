package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPluginRoot(t *testing.T) {
	staging := Owner{ID: "aaaa", Location: "/w/staging.state"}
	prod := Owner{ID: "bbbb", Location: "/w/prod.state"}
	type layout struct {
		mark    *Owner // the shared folder's mark
		data    bool   // the shared folder holds an instance's data
		ownPrev bool   // the run's own folder exists already
	}
	tests := []struct {
		name     string
		have     layout
		req      PluginRootRequest
		wantOwn  bool   // the run gets <comp>@<id>
		wantMark Owner  // the mark of the folder returned
		note     string // a part of the note; "" for none
	}{
		{name: "nothing yet: the shared folder", req: PluginRootRequest{Run: staging},
			wantMark: staging},
		{name: "marked for the run", have: layout{mark: &staging, data: true}, req: PluginRootRequest{Run: staging},
			wantMark: staging},
		{name: "marked for the run at another location (migrated)", have: layout{mark: &Owner{ID: "aaaa", Location: "/old/staging.state"}, data: true},
			req: PluginRootRequest{Run: staging}, wantMark: staging},
		{name: "another deployment's, alive", have: layout{mark: &staging, data: true}, req: PluginRootRequest{Run: prod},
			wantOwn: true, wantMark: prod, note: "belongs to deployment aaaa (/w/staging.state); this deployment (bbbb, /w/prod.state) keeps its own in .gantry/state/app@bbbb"},
		{name: "another deployment's, its state gone", have: layout{mark: &staging, data: true},
			req: PluginRootRequest{Run: prod, Gone: func(o Owner) bool { return o == staging }}, wantMark: prod, note: "takes it over"},
		{name: "the same state made anew", have: layout{mark: &Owner{ID: "old0", Location: "/w/staging.state"}, data: true},
			req: PluginRootRequest{Run: staging}, wantMark: staging, note: "belonged to deployment old0"},
		{name: "the run's own folder comes first", have: layout{mark: &staging, data: true, ownPrev: true},
			req: PluginRootRequest{Run: prod, Gone: func(Owner) bool { return true }}, wantOwn: true, wantMark: prod},
		{name: "unmarked, empty", have: layout{}, req: PluginRootRequest{Run: prod}, wantMark: prod},
		{name: "unmarked, recorded by the run's state", have: layout{data: true}, req: PluginRootRequest{Run: prod, Recorded: true},
			wantMark: prod},
		{name: "unmarked, the default state", have: layout{data: true}, req: PluginRootRequest{Run: staging, Default: true},
			wantMark: staging},
		{name: "unmarked, neither", have: layout{data: true}, req: PluginRootRequest{Run: prod},
			wantOwn: true, wantMark: prod, note: "written by an earlier gantry for a deployment that is not this one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
			shared := w.StateRoot("app")
			if tc.have.mark != nil || tc.have.data || strings.HasPrefix(tc.name, "unmarked, empty") {
				if err := os.MkdirAll(shared, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if tc.have.mark != nil {
				if err := markOwner(shared, *tc.have.mark); err != nil {
					t.Fatal(err)
				}
			}
			if tc.have.data {
				if err := os.MkdirAll(filepath.Join(shared, "db"), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if tc.have.ownPrev {
				if err := markOwner(shared+"@"+tc.req.Run.ID, tc.req.Run); err != nil {
					t.Fatal(err)
				}
			}
			tc.req.Component = "app"
			dir, note, err := w.PluginRoot(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			want := shared
			if tc.wantOwn {
				want = shared + "@" + tc.req.Run.ID
			}
			if dir != want {
				t.Errorf("dir = %s, want %s", dir, want)
			}
			if got, marked, err := readOwner(dir); err != nil || !marked || got != tc.wantMark {
				t.Errorf("mark of %s = %+v (marked %v, %v), want %+v", dir, got, marked, err, tc.wantMark)
			}
			if tc.wantOwn && tc.have.mark != nil {
				if got, _, _ := readOwner(shared); got != *tc.have.mark {
					t.Errorf("the other deployment's mark changed: %+v", got)
				}
			}
			if (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("note = %q, want one with %q", note, tc.note)
			}
		})
	}
}

func TestPluginRootRefusals(t *testing.T) {
	w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
	if _, _, err := w.PluginRoot(PluginRootRequest{Component: "app"}); err == nil {
		t.Error("no deployment id: no error")
	}
	shared := w.StateRoot("app")
	if err := os.MkdirAll(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, ownerFile), []byte("state /x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := w.PluginRoot(PluginRootRequest{Component: "app", Run: Owner{ID: "aaaa", Location: "/x"}})
	if err == nil || !strings.Contains(err.Error(), "names no deployment") {
		t.Errorf("a mark without a deployment: %v", err)
	}
}

func TestReleasePluginRoot(t *testing.T) {
	w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
	dir := w.StateRoot("app")
	o := Owner{ID: "aaaa", Location: "/w/a.state"}
	if err := markOwner(dir, o); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := w.ReleasePluginRoot(dir); err != nil {
		t.Fatal(err)
	}
	if _, marked, _ := readOwner(dir); !marked {
		t.Fatal("a folder with an instance's data was released")
	}
	if err := os.Remove(filepath.Join(dir, "db")); err != nil {
		t.Fatal(err)
	}
	if err := w.ReleasePluginRoot(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the emptied folder is still there: %v", err)
	}
	if err := w.ReleasePluginRoot(dir); err != nil {
		t.Errorf("releasing a folder that is gone: %v", err)
	}
}
