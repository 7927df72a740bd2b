package state

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// crashCopy copies a running recorder's files, as a kill -9 would leave
// them, into a folder of their own.
func crashCopy(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	to := filepath.Join(dir, "hub.yaml.state")
	for _, p := range [][2]string{{path, to}, {JournalPath(path), JournalPath(to)}} {
		b, err := os.ReadFile(p[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

func mustRead(t *testing.T, path string) *State {
	t.Helper()
	st, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// running starts a recorder on a fresh state file with a fixed clock.
func running(t *testing.T) (*Recorder, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hub.yaml.state")
	r := NewRecorder(path, sample())
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return fixed }
	return r, path
}

// TestJournalReadsBackWhileRunning: during a run the snapshot and the
// journal together read back as the recorder's state, whatever changed:
// components added, changed, removed, and the stack's fields.
func TestJournalReadsBackWhileRunning(t *testing.T) {
	r, path := running(t)
	defer r.Close()
	steps := []func(){
		func() { r.UpdateComponent("web", func(c *Component) { c.Status = StatusIncomplete; c.Order = 3 }) },
		func() {
			r.UpdateComponent("web", func(c *Component) {
				c.Status = StatusDeployed
				c.Outputs = map[string]string{"url": "http://x", "multi": "a\nb: c"}
			})
		},
		func() { r.RemoveComponent("true") },
		func() {
			r.UpdateStack(func(s *State) { s.Status = StatusDeployed; s.Outputs = map[string]string{"o": "1"} })
		},
		func() {
			r.RemoveComponent("db")
			r.UpdateComponent("db", func(c *Component) { c.Status = StatusFailed })
		},
	}
	for i, step := range steps {
		step()
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(JournalPath(path)); err != nil {
			t.Fatalf("step %d: no journal during the run: %v", i, err)
		}
		if diff := cmp.Diff(r.Snapshot(), mustRead(t, crashCopy(t, path))); diff != "" {
			t.Errorf("step %d: read back (-want +got):\n%s", i, diff)
		}
	}
}

// TestTornJournalRecord cuts the journal at every byte of its last record:
// each cut reads back as the state before that record.
func TestTornJournalRecord(t *testing.T) {
	r, path := running(t)
	defer r.Close()
	if err := r.Wait(r.UpdateComponent("a", func(c *Component) { c.Status = StatusIncomplete })); err != nil {
		t.Fatal(err)
	}
	cut := journalEnd(t, JournalPath(path))
	before := r.Snapshot()
	if err := r.Wait(r.UpdateComponent("a", func(c *Component) {
		c.Status = StatusDeployed
		c.Outputs = map[string]string{"k": "v"}
	})); err != nil {
		t.Fatal(err)
	}
	after := r.Snapshot()
	crashed := crashCopy(t, path)
	journal, err := os.ReadFile(JournalPath(crashed))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(after, mustRead(t, crashed)); diff != "" {
		t.Fatalf("whole journal (-want +got):\n%s", diff)
	}
	end := journalEnd(t, JournalPath(path))
	if end <= cut || end > int64(len(journal)) {
		t.Fatalf("the last record is not at %d..%d of a journal of %d bytes", cut, end, len(journal))
	}
	// A kill -9 leaves the record cut, or written in part over the zeros
	// the journal was written ahead with.
	for n := cut; n < end; n++ {
		for _, torn := range [][]byte{journal[:n], append(append([]byte(nil), journal[:n]...), make([]byte, end-n+100)...)} {
			if err := os.WriteFile(JournalPath(crashed), torn, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadFile(crashed)
			if err != nil {
				t.Fatalf("cut at %d: %v", n, err)
			}
			if diff := cmp.Diff(before.Components["a"], got.Components["a"]); diff != "" {
				t.Fatalf("cut at %d of %d (%d bytes): (-want +got):\n%s", n, end, len(torn), diff)
			}
		}
	}
	// A damaged byte inside the last record is the same as a cut.
	damaged := append([]byte(nil), journal...)
	damaged[end-3] ^= 0xff
	if err := os.WriteFile(JournalPath(crashed), damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, crashed); got.Components["a"].Status != StatusIncomplete {
		t.Errorf("a damaged record was applied: %+v", got.Components["a"])
	}
}

// journalEnd is where the journal's records end: its file goes on with
// the zeros it was written ahead with.
func journalEnd(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	for _, rec := range readRecords(b) {
		end += recordHead + 1 + int64(len(rec.data))
	}
	return end
}

// TestJournalCompactedIntoTheSnapshot: a run cut short after it replaced
// the snapshot with one its journal was compacted into, before it removed
// the journal, leaves a journal that names that snapshot: it is ignored,
// the snapshot has all it had. Its own journal, or one a run cut short
// earlier left (the next run's first write replaces the snapshot).
func TestJournalCompactedIntoTheSnapshot(t *testing.T) {
	for _, left := range []bool{false, true} {
		r, path := running(t)
		if err := r.Wait(r.UpdateComponent("a", func(c *Component) { c.Status = StatusDeployed })); err != nil {
			t.Fatal(err)
		}
		crashed := crashCopy(t, path)
		r.Close()
		rewritten := r.Snapshot()
		rewritten.Components["a"].Status = StatusFailed
		data, err := Encode(rewritten)
		if err != nil {
			t.Fatal(err)
		}
		// What Finish and a new generation do before the journal goes.
		w := &fileWriter{path: crashed}
		if !left {
			f, err := os.OpenFile(JournalPath(crashed), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			w.journal, w.jsize = f, journalEnd(t, JournalPath(crashed))
		}
		w.markCompacted(data)
		if err := writeAtomic(crashed, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if w.journal != nil {
			w.journal.Close()
		}
		if got := mustRead(t, crashed); got.Components["a"].Status != StatusFailed {
			t.Errorf("left by an earlier run %v: the old journal was replayed over a newer snapshot: a is %s", left, got.Components["a"].Status)
		}
	}
}

// TestJournalOfAnEditedSnapshot: a snapshot changed after a run was cut
// short (by hand) no longer continues the run's journal: reading it is
// refused, naming the components the journal changes, rather than the
// run's changes dropped; once the journal is moved aside, the file reads
// as it is.
func TestJournalOfAnEditedSnapshot(t *testing.T) {
	r, path := running(t)
	defer r.Close()
	// The first write is a snapshot; those after it records of the journal.
	for _, name := range []string{"first", "b", "a"} {
		if err := r.Wait(r.UpdateComponent(name, func(c *Component) { c.Status = StatusIncomplete })); err != nil {
			t.Fatal(err)
		}
	}
	crashed := crashCopy(t, path)
	snap, err := os.ReadFile(crashed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crashed, append(snap, []byte("# looked at by hand\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(crashed)
	var edited *EditedError
	if !errors.As(err, &edited) || !strings.Contains(err.Error(), "holds that run's changes to a, b, which the file lacks") {
		t.Fatalf("an edited snapshot: %v", err)
	}
	if err := os.Rename(JournalPath(crashed), JournalPath(crashed)+".aside"); err != nil {
		t.Fatal(err)
	}
	mustRead(t, crashed)
}

// TestReadWhileTheRunCompacts: a run that ends compacts its journal into a
// new snapshot (renamed over the old) and removes the journal. A reader
// that read the old snapshot just before, and then finds no journal, reads
// the snapshot again: it never returns the old snapshot without the run's
// changes.
func TestReadWhileTheRunCompacts(t *testing.T) {
	r, path := running(t)
	// The first write is a snapshot; the second a record of the journal.
	for _, status := range []string{StatusIncomplete, StatusDeployed} {
		if err := r.Wait(r.UpdateComponent("web", func(c *Component) { c.Status = status; c.Order = 7 })); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(JournalPath(path)); err != nil || len(readRecords(b)) < 2 {
		t.Fatalf("no record in the journal to compact: %v", err)
	}
	want := r.Snapshot()
	var closeErr error
	compacted := false
	snapshotRead = func(attempt int) {
		if attempt == 0 && !compacted {
			compacted = true
			closeErr = r.Close()
		}
	}
	defer func() { snapshotRead = nil }()
	files, err := ReadFiles(path)
	if err != nil || closeErr != nil {
		t.Fatal(err, closeErr)
	}
	if !compacted {
		t.Fatal("the run never compacted between the reads")
	}
	if _, err := os.Stat(JournalPath(path)); !os.IsNotExist(err) {
		t.Fatalf("the journal is still there after Close: %v", err)
	}
	got, err := files.Decode(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read while the run compacted (-want +got):\n%s", diff)
	}
}

// TestRecorderCompactsAndCloses: a journal grown past its bound is folded
// into a new snapshot during the run; Close leaves the snapshot alone, the
// same bytes as Encode.
func TestRecorderCompactsAndCloses(t *testing.T) {
	r, path := running(t)
	big := string(make([]byte, 4096))
	for i := 0; i < 600; i++ { // about 2.4 MB of records
		r.UpdateComponent("c", func(c *Component) { c.Status = StatusDeployed; c.Reason = big[:i%4096] + "x"; c.Order = i })
		if i%50 == 0 {
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	snap, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := journalEnd(t, JournalPath(path)); n > 2*compactAt(int(snap.Size())) {
		t.Errorf("the journal grew to %d bytes: never compacted", n)
	}
	if diff := cmp.Diff(r.Snapshot(), mustRead(t, crashCopy(t, path))); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(JournalPath(path)); !os.IsNotExist(err) {
		t.Errorf("the journal is still there after Close: %v", err)
	}
	got, _ := os.ReadFile(path)
	want, _ := Encode(r.Snapshot())
	if string(got) != string(want) {
		t.Error("the snapshot after Close is not what Encode writes")
	}
}

// TestFailedJournalWriteStartsAGeneration: after a write to the journal
// fails, the recorder never appends to it again: the next write is a new
// snapshot, with the change that failed, and a new journal.
func TestFailedJournalWriteStartsAGeneration(t *testing.T) {
	r, path := running(t)
	if err := r.Wait(r.UpdateComponent("a", func(c *Component) { c.Status = StatusIncomplete })); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock() // the writer is idle after Wait; the lock orders the read after its write
	broken := r.w.(*fileWriter).journal
	r.mu.Unlock()
	broken.Close() // its next write fails
	err := r.Wait(r.UpdateComponent("a", func(c *Component) { c.Status = StatusDeployed }))
	if err == nil {
		t.Fatal("a write to a closed journal did not fail")
	}
	// The journal's file was created as its .tmp: the error names the
	// journal.
	if want := "write state journal " + JournalPath(path) + ": write: "; !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("error %q, want it to begin %q and name no .tmp", err, want)
	}
	if err := r.Wait(r.UpdateComponent("b", func(c *Component) { c.Status = StatusDeployed })); err != nil {
		t.Fatalf("the write after a failed one: %v", err)
	}
	st := mustRead(t, crashCopy(t, path))
	if st.Components["a"].Status != StatusDeployed || st.Components["b"] == nil {
		t.Errorf("after the new generation: a %s, b %v", st.Components["a"].Status, st.Components["b"])
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// FuzzJournal reads arbitrary journals after a snapshot: never a panic,
// and a journal that reads is applied in full or not at all.
func FuzzJournal(f *testing.F) {
	snap, err := Encode(sample())
	if err != nil {
		f.Fatal(err)
	}
	base := appendRecord(nil, recBase, []byte(snapshotDigest(snap)))
	frag, _ := encodeComponent("web", &Component{Status: StatusDeployed, Outputs: map[string]string{"a": "b"}})
	head, _ := encodeHeader(sample())
	f.Add(appendRecord(nil, recComponent, frag))
	f.Add(appendRecord(appendRecord(nil, recHeader, head), recRemove, []byte("db")))
	f.Add(appendRecord(nil, recComponent, []byte("  x:\n    status: nope\n")))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, tail []byte) {
		st, err := Files{Snapshot: snap, Journal: append(append([]byte(nil), base...), tail...)}.Decode("hub.yaml.state")
		if err == nil && st == nil {
			t.Fatal("no state and no error")
		}
	})
}

// TestJournalWrittenAhead: the journal's file is written ahead with zeros,
// which readers stop at, and grows ahead again when records reach them.
func TestJournalWrittenAhead(t *testing.T) {
	r, path := running(t)
	defer r.Close()
	big := string(make([]byte, 1000))
	for i := 0; i < 300; i++ { // about 300 KB of records: past the first reserve
		if err := r.Wait(r.UpdateComponent("c", func(c *Component) { c.Reason = big + "x"; c.Order = i })); err != nil {
			t.Fatal(err)
		}
		if i%50 != 0 {
			continue
		}
		b, err := os.ReadFile(JournalPath(path))
		if err != nil {
			t.Fatal(err)
		}
		end := journalEnd(t, JournalPath(path))
		if int64(len(b)) < end+1 {
			t.Fatalf("write %d: a journal of %d bytes has records up to %d: not written ahead", i, len(b), end)
		}
		for j, c := range b[end:] {
			if c != 0 {
				t.Fatalf("write %d: byte %d after the records is %#x, not zero", i, end+int64(j), c)
			}
		}
		if diff := cmp.Diff(r.Snapshot(), mustRead(t, crashCopy(t, path))); diff != "" {
			t.Fatalf("write %d: read back (-want +got):\n%s", i, diff)
		}
	}
}

// TestJournalWithoutRoomForItsZeros: past a file size limit (as on a disk
// nearly full), the zeros a journal is written ahead with fail where its
// records still fit: the zeros are cut back, and every record is appended,
// reads back, and none fails.
// It runs in a child process of its own, whose limit the others must not
// share; Go would end it on SIGXFSZ, which it ignores.
func TestJournalWithoutRoomForItsZeros(t *testing.T) {
	const limit = reserveFirst / 4
	dir := os.Getenv("GANTRY_TEST_FSIZE_DIR")
	if dir == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestJournalWithoutRoomForItsZeros$", "-test.v")
		cmd.Env = append(os.Environ(), "GANTRY_TEST_FSIZE_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("in a process limited to files of %d bytes: %v\n%s", limit, err, out)
		}
		return
	}
	signal.Ignore(syscall.SIGXFSZ)
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		t.Fatal(err)
	}
	rl.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &rl); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hub.yaml.state")
	r := NewRecorder(path, sample())
	var end int64
	for i := 0; i < 5; i++ {
		if err := r.Wait(r.UpdateComponent("c", func(c *Component) { c.Status = StatusDeployed; c.Order = i })); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		b, err := os.ReadFile(JournalPath(path))
		if err != nil {
			t.Fatal(err)
		}
		// The zeros that failed were cut back (a disk full gets its
		// space back), and the records appended one after the other:
		// the same journal, not a new generation (a whole snapshot)
		// each time.
		e := journalEnd(t, JournalPath(path))
		if int64(len(b)) != e {
			t.Errorf("write %d: a journal of %d bytes whose records end at %d: zeros left after a failed reserve", i, len(b), e)
		}
		if i > 0 && e <= end {
			t.Errorf("write %d: the journal's records end at %d, not past the last write's %d", i, e, end)
		}
		end = e
		st, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r.Snapshot(), st); diff != "" {
			t.Fatalf("write %d: read back (-want +got):\n%s", i, diff)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if st := mustRead(t, path); st.Components["c"].Order != 4 {
		t.Errorf("after the close: order %d, want 4", st.Components["c"].Order)
	}
}

// batchLog is a Writer that keeps the batches written to it.
type batchLog struct {
	mu      sync.Mutex
	batches []Batch
}

func (w *batchLog) Write(_ context.Context, b Batch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.batches = append(w.batches, b)
	return nil
}

func (w *batchLog) Compact() bool { return false }

func (w *batchLog) Finish(context.Context, func() (Batch, error), bool) error { return nil }

// TestHeaderWrittenWhenItChanges: a component's change moves the stack's
// update time only to the second, so the stack's fields (which may hold
// thousands of parameters) go with a batch when that second moves or they
// change, not with every component's batch; and what is read back holds
// the time of the last change.
func TestHeaderWrittenWhenItChanges(t *testing.T) {
	w := &batchLog{}
	st := sample()
	st.Parameters = map[string]string{"a": "1", "b": "2"}
	r := Record(w, st)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return now }
	steps := []struct {
		name   string
		change func()
		header bool
	}{
		{"first change", func() { r.UpdateComponent("web", func(c *Component) { c.Status = StatusIncomplete }) }, true},
		{"same second", func() { r.UpdateComponent("web", func(c *Component) { c.Status = StatusDeployed }) }, false},
		{"later in the second", func() {
			now = now.Add(900 * time.Millisecond)
			r.UpdateComponent("db", func(c *Component) { c.Status = StatusDeployed })
		}, false},
		{"the next second", func() {
			now = now.Add(200 * time.Millisecond)
			r.UpdateComponent("db", func(c *Component) { c.Status = StatusFailed })
		}, true},
		{"the stack's fields", func() { r.UpdateStack(func(s *State) { s.Status = StatusFailed }) }, true},
	}
	for _, step := range steps {
		before := len(w.batches)
		step.change()
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		if len(w.batches) != before+1 {
			t.Fatalf("%s: %d batches written, want 1", step.name, len(w.batches)-before)
		}
		b := w.batches[len(w.batches)-1]
		if got := b.Header != nil; got != step.header {
			t.Errorf("%s: header written %v, want %v", step.name, got, step.header)
		}
		if want := now.Truncate(time.Second); !r.Snapshot().Updated.Equal(want) {
			t.Errorf("%s: updated %v, want %v", step.name, r.Snapshot().Updated, want)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReplayErrorsWithoutValues: a journal record that does not decode
// (one gantry did not write) is said in words, without its values — a
// secret's — or the position inside the record's own document.
func TestReplayErrorsWithoutValues(t *testing.T) {
	s := &State{Version: FormatVersion, Components: map[string]*Component{}}
	recs := []record{{kind: recBase}, {kind: recComponent, data: []byte("  \"a\":\n    status: deployed\n    verb: !!bool \"hunter2-SUPERSECRET\"\n")}}
	err := replay(s, recs)
	if err == nil {
		t.Fatal("a bad record replayed")
	}
	msg := err.Error()
	if strings.Contains(msg, "hunter2") || strings.Contains(msg, "[") || !strings.HasPrefix(msg, "record 2: the record is not valid: ") {
		t.Errorf("replay error %q", msg)
	}
}
