package state

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBaseCutsWhatEncodeWrote: the base of a document gantry wrote holds
// the header and every component's record exactly as Encode wrote them,
// for random states (names and values that need quoting among them).
func TestBaseCutsWhatEncodeWrote(t *testing.T) {
	r := rand.New(rand.NewSource(20261125))
	skipped := 0
	defer func() {
		if skipped > 30 {
			t.Errorf("%d of 300 random states skipped", skipped)
		}
	}()
	for i := range 300 {
		s := randState(r)
		// Names as manifests give them: UTF-8.
		comps := map[string]*Component{}
		for name, c := range s.Components {
			comps[strings.ToValidUTF8(name, "?")] = c
		}
		s.Components = comps
		b, err := FullBatch(s)
		if err != nil {
			t.Fatal(err)
		}
		f := Files{Snapshot: b.Snapshot, Continuable: true}
		st, err := decodeDoc(f.Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		if !sameNames(s, st) {
			// Read back as another state (a name of bytes YAML
			// reads otherwise): not one gantry keeps.
			skipped++
			continue
		}
		base := f.Base(st)
		if base == nil {
			t.Fatalf("state %d: no base of a document gantry wrote:\n%s", i, b.Snapshot)
		}
		if !bytes.Equal(base.header, b.Header) {
			t.Errorf("state %d: header %q, want %q", i, base.header, b.Header)
		}
		var want []string
		for _, frag := range b.Components {
			want = append(want, frag.Name)
			if !bytes.Equal(base.frags[frag.Name], frag.Data) {
				t.Errorf("state %d: record of %q is %q, want %q", i, frag.Name, base.frags[frag.Name], frag.Data)
			}
		}
		if diff := cmp.Diff(want, base.names, cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" {
			t.Errorf("state %d: names (-want +got):\n%s", i, diff)
		}
		if got := assemble(nil, base.header, base.frags, base.names); !bytes.Equal(got, b.Snapshot) {
			t.Errorf("state %d: the base does not assemble back into its document", i)
		}
	}
}

// TestNoBase: files a run must write whole first give no base.
func TestNoBase(t *testing.T) {
	doc := mustEncode(t, sample())
	st, err := Decode("x", doc)
	if err != nil {
		t.Fatal(err)
	}
	other := sample()
	other.Component("extra").Status = StatusDeployed
	// Two records swapped: valid YAML, not the order gantry writes.
	header, comps, _ := splitSnapshot(doc)
	i := strings.Index(string(comps), "\n  \"") + 1
	swapped := append(append(append([]byte{}, header...), "components:\n"...), append(append([]byte{}, comps[i:]...), comps[:i]...)...)
	swappedState, err := Decode("x", swapped)
	if err != nil {
		t.Fatalf("swapped document: %v", err)
	}
	for _, c := range []struct {
		name string
		f    Files
		st   *State
	}{
		{"a store that does not say so", Files{Snapshot: doc}, st},
		{"a journal to compact", Files{Snapshot: doc, Journal: []byte("x"), Continuable: true}, st},
		{"no snapshot", Files{Continuable: true}, st},
		{"another state", Files{Snapshot: doc, Continuable: true}, other},
		{"records out of order", Files{Snapshot: swapped, Continuable: true}, swappedState},
		{"a hand-written flow mapping", Files{Snapshot: []byte("version: 1\nstack: s\ncomponents: {}\n"), Continuable: true}, New("s")},
	} {
		if c.f.Base(c.st) != nil {
			t.Errorf("%s: got a base", c.name)
		}
	}
	empty := mustEncode(t, New("s"))
	if (Files{Snapshot: empty, Continuable: true}).Base(New("s")) == nil {
		t.Error("a state without components: no base")
	}
}

// recordFromFile reads the state file at path, as a run does, and returns
// a recorder that continues it from its base (a journal beside the
// snapshot).
func recordFromFile(t *testing.T, path string) *Recorder {
	t.Helper()
	store := NewFileStore(path)
	files, err := store.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := files.Decode(path)
	if err != nil {
		t.Fatal(err)
	}
	base := files.Base(st)
	if base == nil {
		t.Fatal("no base")
	}
	w, err := store.Writer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return RecordFrom(w, st.Clone(), base)
}

// TestRecordFromBase: a run recorded from the state's base leaves the
// snapshot as it was until the run closes — its changes go to a journal
// that continues it — reads back right at any moment, and comes to rest
// as the document of the state it ended with.
func TestRecordFromBase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.yaml.state")
	doc := mustEncode(t, sample())
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	r := recordFromFile(t, path)
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return fixed }
	r.UpdateStack(func(s *State) { s.LastRun = "run-2"; s.Status = StatusIncomplete })
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, doc) {
		t.Fatal("the first write rewrote the snapshot")
	}
	journal, err := os.ReadFile(JournalPath(path))
	if err != nil {
		t.Fatal(err)
	}
	recs := readRecords(journal)
	if len(recs) != 2 || recs[0].kind != recBase || recs[1].kind != recHeader {
		t.Fatalf("journal of the first write: %d records, want base and header", len(recs))
	}
	if diff := cmp.Diff(r.Snapshot(), mustRead(t, crashCopy(t, path))); diff != "" {
		t.Errorf("after the first write (-want +got):\n%s", diff)
	}
	r.UpdateComponent("web", func(c *Component) { c.Status = StatusFailed })
	r.RemoveComponent("db")
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.Snapshot(), mustRead(t, crashCopy(t, path))); diff != "" {
		t.Errorf("after changes (-want +got):\n%s", diff)
	}
	want := r.Snapshot()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(JournalPath(path)); !os.IsNotExist(err) {
		t.Errorf("journal left after close: %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, mustEncode(t, want)) {
		t.Errorf("the snapshot at rest is not the document of the final state:\n%s", now)
	}
}

func sameNames(a, b *State) bool {
	if len(a.Components) != len(b.Components) {
		return false
	}
	for name := range a.Components {
		if b.Components[name] == nil {
			return false
		}
	}
	return true
}

// FuzzBase: whatever a document holds, a base cut from it has records that
// each read back as the component the whole document read as, and joins
// back into the document: a base never carries what the state does not.
func FuzzBase(f *testing.F) {
	r := rand.New(rand.NewSource(2))
	for range 20 {
		if data, err := Encode(randState(r)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("version: 1\nstack: s\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeDoc(data)
		if err != nil || st.Components == nil {
			return
		}
		base := Files{Snapshot: data, Continuable: true}.Base(st)
		if base == nil {
			return
		}
		if got := assemble(nil, base.header, base.frags, base.names); !bytes.Equal(got, data) {
			t.Fatalf("the base does not join back into its document:\n%q", data)
		}
		for name, frag := range base.frags {
			doc, err := decodeDoc(assemble(nil, componentOnlyHeader, map[string][]byte{"": frag}, []string{""}))
			if err != nil {
				t.Fatalf("record of %q does not read alone (%v):\n%q", name, err, data)
			}
			if diff := cmp.Diff(map[string]*Component{name: st.Components[name]}, doc.Components, sameState); diff != "" {
				t.Fatalf("record of %q reads as another component (-document +record):\n%s\n%q", name, diff, data)
			}
		}
	})
}
