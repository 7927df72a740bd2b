package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	staging = Owner{ID: "aaaa", Key: "/w/staging.state", Location: "/w/staging.state"}
	prod    = Owner{ID: "bbbb", Key: "postgres://db:5432/envs?stack=s", Location: "postgres://u:*****@db/envs"}
)

func TestPluginRoot(t *testing.T) {
	type layout struct {
		mark    *Owner // the shared folder's mark
		data    bool   // the shared folder holds an instance's data
		ownPrev bool   // the run's own folder exists already
	}
	tests := []struct {
		name     string
		have     layout
		req      PluginRootRequest
		want     string // "shared", "own"
		wantMark Owner
		note     string // a part of the note; "" for none
		err      string // the whole error; "" for none
	}{
		{name: "nothing yet: the shared folder", req: PluginRootRequest{Run: staging},
			want: "shared", wantMark: staging},
		{name: "marked for the run", have: layout{mark: &staging, data: true}, req: PluginRootRequest{Run: staging},
			want: "shared", wantMark: staging},
		{name: "marked for the run, its state moved", have: layout{mark: &Owner{ID: "aaaa", Key: "/old/s.state", Location: "/old/s.state"}, data: true},
			req: PluginRootRequest{Run: staging}, want: "shared", wantMark: staging},
		{name: "another deployment's", have: layout{mark: &staging, data: true}, req: PluginRootRequest{Run: prod},
			want: "own", wantMark: prod, note: "plugin data: .gantry/state/app belongs to deployment aaaa (/w/staging.state); this deployment (bbbb, postgres://u:*****@db/envs) keeps its own in .gantry/state/app@bbbb"},
		{name: "another deployment's, its state file gone (never a guess)", have: layout{mark: &Owner{ID: "cccc", Key: "/w/gone.state", Location: "/w/gone.state"}, data: true},
			req: PluginRootRequest{Run: staging, Recorded: true}, want: "own", wantMark: staging, note: "keeps its own"},
		{name: "the same location made anew", have: layout{mark: &Owner{ID: "old0", Key: "/w/staging.state", Location: "/w/staging.state"}, data: true},
			req: PluginRootRequest{Run: staging}, want: "shared", wantMark: staging, note: "belonged to deployment old0, an earlier state at this state's location"},
		{name: "the run's own folder comes first", have: layout{mark: &Owner{ID: "old0", Key: prod.Key, Location: prod.Location}, data: true, ownPrev: true},
			req: PluginRootRequest{Run: prod}, want: "own", wantMark: prod},
		{name: "unmarked, empty", have: layout{}, req: PluginRootRequest{Run: prod}, want: "shared", wantMark: prod},
		{name: "unmarked, recorded by the run's state", have: layout{data: true}, req: PluginRootRequest{Run: prod, Recorded: true},
			want: "shared", wantMark: prod, note: "left unmarked by an earlier gantry, is taken as this deployment's"},
		{name: "unmarked, not recorded", have: layout{data: true}, req: PluginRootRequest{Run: staging},
			err: "plugin data: .gantry/state/app was left unmarked by an earlier gantry, and this state records no plugin instances of app, so whose it is cannot be told; " +
				"app's plugins do not start from nothing beside it (terraform would create again what it manages). " +
				"If it is this deployment's (aaaa, /w/staging.state; its state was deleted or made anew), adopt it: mv {shared} {shared}@aaaa. " +
				"If it is another deployment's, run that one first (its state records the instances: it takes the folder), then this one. If it is no deployment's, remove it"},
		{name: "unmarked, not recorded, read-only", have: layout{data: true}, req: PluginRootRequest{Run: staging, ReadOnly: true},
			want: "own", note: "left unmarked by an earlier gantry, and this state records no plugin instances of app; this deployment (aaaa, /w/staging.state) keeps its own"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
			shared := w.StateRoot("app")
			if err := os.MkdirAll(shared, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.name == "nothing yet: the shared folder" {
				if err := os.Remove(shared); err != nil {
					t.Fatal(err)
				}
			}
			if tc.have.mark != nil {
				mustMark(t, shared, *tc.have.mark)
			}
			if tc.have.data {
				mustMkdir(t, filepath.Join(shared, "db"))
			}
			if tc.have.ownPrev {
				mustMark(t, shared+"@"+tc.req.Run.ID, tc.req.Run)
			}
			tc.req.Component = "app"
			// The command to paste names the folder from the current one.
			want := strings.ReplaceAll(tc.err, "{shared}", shared)
			if !tc.req.ReadOnly {
				// Asked before the run, the same answer, and nothing made.
				before := listTree(t, filepath.Dir(w.Root))
				refusal := w.PluginRootRefusal(tc.req)
				if tc.err == "" && refusal != nil || tc.err != "" && (refusal == nil || refusal.Error() != want) {
					t.Errorf("PluginRootRefusal:\n%v\nwant %q", refusal, want)
				}
				if after := listTree(t, filepath.Dir(w.Root)); after != before {
					t.Errorf("PluginRootRefusal changed the folder:\n%s\nwas\n%s", after, before)
				}
			}
			dir, note, err := w.PluginRoot(context.Background(), tc.req)
			if tc.err != "" {
				if err == nil || err.Error() != want {
					t.Fatalf("error:\n%v\nwant\n%s", err, want)
				}
				if entries, _ := os.ReadDir(filepath.Join(w.Root, "state")); len(entries) != 2 { // app and @lock
					t.Errorf("the refusal made folders: %v", entries)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantDir := shared
			if tc.want == "own" {
				wantDir = shared + "@" + tc.req.Run.ID
			}
			if dir != wantDir {
				t.Errorf("dir = %s, want %s", dir, wantDir)
			}
			if tc.req.ReadOnly {
				if isDir(dir) && dir != shared {
					t.Errorf("read-only: %s was made", dir)
				}
			} else if got, marked, err := readOwner(dir); err != nil || !marked || got != tc.wantMark {
				t.Errorf("mark of %s = %+v (marked %v, %v), want %+v", dir, got, marked, err, tc.wantMark)
			}
			if tc.want == "own" && tc.have.mark != nil {
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

// listTree lists the files and folders under root with their sizes and
// modification times: what a read-only decision must leave as it was.
func listTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPluginRootReadOnlyChangesNothing(t *testing.T) {
	w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
	shared := w.StateRoot("app")
	mustMark(t, shared, staging)
	mustMkdir(t, filepath.Join(shared, "db"))
	dir, _, err := w.PluginRoot(context.Background(), PluginRootRequest{Component: "app", Run: prod, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if dir != shared+"@bbbb" || isDir(dir) {
		t.Errorf("read-only: dir %s (made: %v), want app@bbbb not made", dir, isDir(dir))
	}
	if _, err := os.Stat(filepath.Join(w.Root, "state", lockFile)); err == nil {
		t.Error("read-only: the lock file was made")
	}
}

func TestPluginRootRefusals(t *testing.T) {
	w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
	for _, id := range []string{"", "x/../../victim", "a b", "a\nb", strings.Repeat("a", 65)} {
		if _, _, err := w.PluginRoot(context.Background(), PluginRootRequest{Component: "app", Run: Owner{ID: id, Key: "/k", Location: "/k"}}); err == nil {
			t.Errorf("deployment id %q: no error", id)
		}
	}
	if isDir(filepath.Join(filepath.Dir(w.Root), "victim")) || isDir(w.StateRoot("app")) {
		t.Error("a refused id made a folder")
	}
	shared := w.StateRoot("app")
	mustMkdir(t, shared)
	if err := os.WriteFile(filepath.Join(shared, ownerFile), []byte("key /x\nstate /x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := w.PluginRoot(context.Background(), PluginRootRequest{Component: "app", Run: staging})
	if err == nil || !strings.Contains(err.Error(), "names no deployment") {
		t.Errorf("a mark without a deployment: %v", err)
	}
}

// A mark a power loss left empty, and the temporary file of a killed
// write, are no mark and no data.
func TestPluginRootLeftovers(t *testing.T) {
	w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
	shared := w.StateRoot("app")
	mustMkdir(t, shared)
	for _, name := range []string{ownerFile, "." + ownerFile + ".tmp123-456"} {
		if err := os.WriteFile(filepath.Join(shared, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir, note, err := w.PluginRoot(context.Background(), PluginRootRequest{Component: "app", Run: prod})
	if err != nil || dir != shared || note != "" {
		t.Fatalf("PluginRoot = %s, %q, %v; want the shared folder, no note", dir, note, err)
	}
	if got, _, _ := readOwner(shared); got != prod {
		t.Errorf("mark = %+v", got)
	}
}

// Two runs deciding at once (two states from one folder, or a worker's
// runs): one gets the shared folder, the other its own.
func TestPluginRootConcurrent(t *testing.T) {
	for i := 0; i < 20; i++ {
		w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
		var wg sync.WaitGroup
		dirs := make([]string, 2)
		for k, o := range []Owner{staging, prod} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dir, _, err := w.PluginRoot(context.Background(), PluginRootRequest{Component: "app", Run: o})
				if err != nil {
					t.Error(err)
				}
				mustMkdir(t, filepath.Join(dir, "db"))
				dirs[k] = dir
			}()
		}
		wg.Wait()
		if dirs[0] == dirs[1] {
			t.Fatalf("both runs got %s", dirs[0])
		}
	}
}

func TestReleasePluginRoot(t *testing.T) {
	w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
	dir := w.StateRoot("app")
	mustMark(t, dir, staging)
	mustMkdir(t, filepath.Join(dir, "db"))
	if err := w.ReleasePluginRoot(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if _, marked, _ := readOwner(dir); !marked {
		t.Fatal("a folder with an instance's data was released")
	}
	if err := os.Remove(filepath.Join(dir, "db")); err != nil {
		t.Fatal(err)
	}
	if err := w.ReleasePluginRoot(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the emptied folder is still there: %v", err)
	}
	if err := w.ReleasePluginRoot(context.Background(), dir); err != nil {
		t.Errorf("releasing a folder that is gone: %v", err)
	}
}

func mustMark(t *testing.T, dir string, o Owner) {
	t.Helper()
	if err := markOwner(dir, o); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

// A mark without a key (written before marks had one) names its state by
// its location.
func TestReadOwnerWithoutKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte("deployment aaaa\nstate /w/staging.state\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o, marked, err := readOwner(dir); err != nil || !marked || o != staging {
		t.Errorf("readOwner = %+v, %v, %v; want %+v", o, marked, err, staging)
	}
}

// A migration marks the folders of the deployment at its old location as
// the new location's, and leaves others alone.
func TestRekeyOwners(t *testing.T) {
	w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
	moved := Owner{ID: "aaaa", Key: "postgres://db:5432/envs?stack=staging", Location: "postgres://db/envs"}
	mustMark(t, w.StateRoot("app"), staging)
	mustMark(t, w.StateRoot("web"), staging)
	mustMark(t, w.StateRoot("app")+"@bbbb", prod)
	mustMark(t, w.StateRoot("old"), Owner{ID: "aaaa", Key: "/w/other.state", Location: "/w/other.state"})
	n, err := w.RekeyOwners(context.Background(), staging, moved)
	if err != nil || n != 2 {
		t.Fatalf("RekeyOwners = %d, %v; want 2", n, err)
	}
	for dir, want := range map[string]Owner{
		w.StateRoot("app"): moved, w.StateRoot("web"): moved, w.StateRoot("app") + "@bbbb": prod,
		w.StateRoot("old"): {ID: "aaaa", Key: "/w/other.state", Location: "/w/other.state"},
	} {
		if got, _, _ := readOwner(dir); got != want {
			t.Errorf("%s: mark %+v, want %+v", dir, got, want)
		}
	}
	if n, err := (Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}).RekeyOwners(context.Background(), staging, moved); err != nil || n != 0 {
		t.Errorf("no workspace: %d, %v", n, err)
	}
}

// TestPluginRootWaitsForTheLock: a decision waits for another run's, says
// so once when it lasts, and ends with its context (Ctrl-C) rather than
// waiting for a holder that may never go on.
func TestPluginRootWaitsForTheLock(t *testing.T) {
	defer func(d time.Duration) { lockWaitNotice = d }(lockWaitNotice)
	lockWaitNotice = 0
	w := Workspace{Root: filepath.Join(t.TempDir(), ".gantry")}
	mustMkdir(t, filepath.Join(w.Root, "state"))
	holder, err := os.OpenFile(filepath.Join(w.Root, "state", lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		cancel bool // else the holder lets go
	}{{"Ctrl-C", true}, {"the holder lets go", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			said := make(chan string, 2)
			type result struct {
				dir string
				err error
			}
			done := make(chan result, 1)
			go func() {
				dir, _, err := w.PluginRoot(ctx, PluginRootRequest{Component: "app", Run: staging, Waiting: func(s string) { said <- s }})
				done <- result{dir, err}
			}()
			msg := <-said
			if want := "plugin data: waiting for .gantry/state/@lock, held by another gantry run from this folder"; !strings.HasPrefix(msg, want) {
				t.Errorf("said %q, want %q…", msg, want)
			}
			if tc.cancel {
				cancel()
			} else if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_UN); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if tc.cancel {
				if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), "waiting for the plugin data lock") || isDir(w.StateRoot("app")) {
					t.Errorf("cancelled: %v (folder made: %v)", r.err, isDir(w.StateRoot("app")))
				}
			} else if r.err != nil || r.dir != w.StateRoot("app") {
				t.Errorf("once let go: %s, %v", r.dir, r.err)
			}
			if len(said) != 0 {
				t.Errorf("said more than once: %q", <-said)
			}
		})
	}
}

// TestMoveOwners: a migration to a state of another workspace moves the
// deployment's folders there, re-marked, into the shared name when it is
// free and <component>@<id> when another deployment has it; another
// deployment's folders stay.
func TestMoveOwners(t *testing.T) {
	base := t.TempDir()
	src := Workspace{Root: filepath.Join(base, "a", ".gantry")}
	dst := Workspace{Root: filepath.Join(base, "b", ".gantry")}
	moved := Owner{ID: "aaaa", Key: "/b/s.state", Location: "/b/s.state"}
	mustMark(t, src.StateRoot("app"), staging)
	mustMkdir(t, filepath.Join(src.StateRoot("app"), "db"))
	mustMark(t, src.StateRoot("net"), staging)
	mustMark(t, src.StateRoot("other"), prod)
	mustMark(t, dst.StateRoot("net"), prod) // taken in dst
	got, err := src.MoveOwners(context.Background(), dst, staging, moved)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{dst.StateRoot("app"), dst.StateRoot("net") + "@aaaa"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("moved %v, want %v", got, want)
	}
	for _, dir := range want {
		if o, marked, err := readOwner(dir); err != nil || !marked || o != moved {
			t.Errorf("%s: mark %+v (%v, %v), want %+v", dir, o, marked, err, moved)
		}
	}
	if !isDir(filepath.Join(dst.StateRoot("app"), "db")) || isDir(src.StateRoot("app")) || isDir(src.StateRoot("net")) {
		t.Error("the data did not move")
	}
	if o, _, _ := readOwner(src.StateRoot("other")); o != prod {
		t.Errorf("another deployment's folder changed: %+v", o)
	}
	if o, _, _ := readOwner(dst.StateRoot("net")); o != prod {
		t.Errorf("dst's other deployment's folder changed: %+v", o)
	}
	// Again: nothing is left to move.
	if got, err := src.MoveOwners(context.Background(), dst, staging, moved); err != nil || len(got) != 0 {
		t.Errorf("again: moved %v, %v", got, err)
	}
	// The deployment's own folder there already (runs take it first):
	// not moved beside it, said.
	mustMark(t, src.StateRoot("web"), staging)
	mustMark(t, dst.StateRoot("web")+"@aaaa", moved)
	if got, err := src.MoveOwners(context.Background(), dst, staging, moved); err == nil || !strings.Contains(err.Error(), "has "+dst.StateRoot("web")+"@aaaa there already") || len(got) != 0 || !isDir(src.StateRoot("web")) {
		t.Errorf("beside its own folder: moved %v, %v", got, err)
	}
}
