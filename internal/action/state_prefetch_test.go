package action

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/state"
)

// TestPrefetchState: the state read while the stack is elaborated is the
// one a read of the store gives, with the recorder's base; a store of
// another file, a database or a list of files is read as before.
func TestPrefetchState(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(manifest, []byte("kind: stack\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := state.New("demo")
	st.Components["db"] = &state.Component{Status: state.StatusDeployed, Started: time.Unix(1, 0).UTC(), Fingerprint: "f"}
	data, err := state.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest+".state", data, 0o600); err != nil {
		t.Fatal(err)
	}
	store := state.NewFileStore(manifest + ".state")
	want, err := store.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantState, err := want.Decode(store.String())
	if err != nil {
		t.Fatal(err)
	}

	p := prefetchState(Source{Manifest: manifest})
	if _, _, _, ok, _ := p.take(state.NewFileStore(filepath.Join(dir, "other.state"))); ok {
		t.Error("the prefetch of hub.yaml.state was taken for other.state")
	}
	files, got, base, ok, _ := p.take(store)
	switch {
	case !ok:
		t.Fatalf("the prefetch was not taken: %v", p.err)
	case files.Sum() != want.Sum():
		t.Error("the prefetched files differ from the store's")
	case base == nil:
		t.Error("no recorder base for a state gantry wrote")
	}
	if diff := cmp.Diff(wantState, got, cmp.AllowUnexported(state.State{})); diff != "" {
		t.Errorf("prefetched state (-read +prefetched):\n%s", diff)
	}

	for _, location := range []string{"postgres://u@h/db", manifest + ".state," + filepath.Join(dir, "b.state")} {
		if p := prefetchState(Source{Manifest: manifest, StatePath: location}); p != nil {
			t.Errorf("%s: prefetched", location)
		}
	}
	// A landscape given by its folder: its state is found by elaborating.
	if p := prefetchState(Source{Manifest: dir}); p != nil {
		t.Errorf("the state of folder %s was prefetched", dir)
	}
	// The location as the store opens it: one item of a list, without file://.
	if p := prefetchState(Source{Manifest: manifest, StatePath: "file://" + manifest + ".state,"}); p == nil || p.path != manifest+".state" {
		t.Errorf("file://%s.state, prefetched as %+v", manifest, p)
	}
	// A broken state is not the prefetch's to report: the read that
	// follows reports it as ever.
	if err := os.WriteFile(manifest+".state", []byte("version: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok, _ := prefetchState(Source{Manifest: manifest}).take(store); ok {
		t.Error("a broken state was taken")
	}
}
