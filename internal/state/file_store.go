package state

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// FileStore is the state as a file (the snapshot) and its journal, locked
// with a lock file next to them: the embedded default.
type FileStore struct {
	path string
}

// NewFileStore is the store of the state file at path.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// Path is the state file.
func (s *FileStore) Path() string { return s.path }

func (s *FileStore) String() string { return s.path }

// Read reads the snapshot and the journal that continues it.
func (s *FileStore) Read(context.Context) (Files, error) {
	f, err := ReadFiles(s.path)
	f.Continuable = err == nil
	return f, err
}

// Lock takes the lock file's flock (lock.go).
func (s *FileStore) Lock(ctx context.Context, h Holder, o LockOptions) (Lock, error) {
	return acquireFile(ctx, s.path, h, o)
}

// Unlock clears a stale holder record (lock.go).
func (s *FileStore) Unlock(context.Context) (UnlockResult, error) { return Unlock(s.path) }

// Writer starts a run's writes: the first batch is a full one, which
// rewrites the snapshot and starts the journal.
func (s *FileStore) Writer(context.Context) (Writer, error) { return &fileWriter{path: s.path}, nil }

// Close has nothing to release.
func (s *FileStore) Close() error { return nil }

// fileWriter appends batches to the journal (journal.go) and rewrites the
// snapshot on a full batch: the snapshot first, then a journal that names
// it, so that a crash in between leaves the new snapshot and an old
// journal, which does not continue it and is ignored.
//
// The journal's file is written ahead with zeros (reserve), and records
// are written over them and synced with fdatasync: a record that changes
// neither the file's length nor its blocks needs no metadata written with
// it, where an append's fsync also wrote the file's inode (ext4 without a
// journal, as on this project's VM) or committed the filesystem's journal
// (with whatever else the run changed meanwhile). The sync of a chain's
// link went from 200 to about 180 µs here. Readers stop at the zeros, a
// record of length 0 (readRecords).
type fileWriter struct {
	path    string
	journal *os.File
	// jsize is the length of the journal's records, reserved the length
	// of its file; snapSize the length of the snapshot it continues;
	// appended says a batch went into it.
	jsize    int64
	reserved int64
	snapSize int
	appended bool
	// unreserved: zeros could not be written ahead (a disk full); the
	// journal's records are appended as they are until its next
	// generation.
	unreserved bool
	// buf frames each batch's records (journalRecords).
	buf []byte
	// broken: a write or sync of the journal failed; nothing more is
	// written into it (markCompacted).
	broken bool
}

// errJournalFull is a batch the journal could not take and still be read
// back: the recorder writes the whole state instead.
var errJournalFull = errors.New("the state journal would be too long to read back")

// Compact asks for a full batch once the journal has grown past twice the
// snapshot's length (at least a MiB), so that rewriting the snapshot costs
// no more than the appends did and a reader replays little — and always
// well before the journal is too long to be read back.
func (w *fileWriter) Compact() bool { return w.jsize > compactAt(w.snapSize) }

// compactAt is the journal length past which the snapshot is rewritten.
func compactAt(snapSize int) int64 {
	return min(max(1<<20, 2*int64(snapSize)), int64(maxSnapshot)/2)
}

func (w *fileWriter) Write(_ context.Context, b Batch) error {
	if b.Full {
		return w.generation(b.Snapshot)
	}
	w.buf = journalRecords(w.buf[:0], b)
	recs := w.buf
	if len(recs) == 0 {
		return nil
	}
	if w.jsize+int64(len(recs)) > int64(maxSnapshot) {
		// The journal could not be read back: the batch goes into a
		// whole snapshot instead, which holds the state if it can be
		// read at all. The first batch of a journal too.
		return errJournalFull
	}
	if w.journal == nil {
		// The run's first write continues the snapshot as it is.
		if b.Base == "" {
			return fmt.Errorf("write state journal %s: no snapshot to continue", JournalPath(w.path))
		}
		return w.start(b.Base, b.BaseSize, recs)
	}
	w.reserve(w.jsize + int64(len(recs)))
	// Past the zeros, a batch that fails part way (a disk full) leaves its
	// first records complete, and readers apply them, as they would after
	// a crash in the middle of a batch: each is a true value; the next
	// write is a whole snapshot.
	n, err := w.journal.WriteAt(recs, w.jsize)
	w.jsize += int64(n)
	// Records written where there was no room for zeros extend the file:
	// the zeros go after them, never over them.
	w.reserved = max(w.reserved, w.jsize)
	if err != nil {
		w.broken = true
		return fmt.Errorf("write state journal %s: %w", JournalPath(w.path), unnamed(err))
	}
	if err := syncData(w.journal); err != nil {
		w.broken = true
		return fmt.Errorf("write state journal %s: %w", JournalPath(w.path), err)
	}
	w.appended = true
	return nil
}

// Bounds of the zeros a journal is written ahead with: the first reserve,
// and the most a reserve adds (it doubles the file up to that).
const (
	reserveFirst = 64 << 10
	reserveMost  = 4 << 20
)

// reserve writes zeros ahead in the journal's file until it holds at least
// end bytes. The records are synced after, with the zeros' blocks. The
// zeros only save the sync some metadata: on a disk nearly full (or past a
// file size limit) they fail where a record alone may still fit, and the
// journal's records are appended as they are from then on; only a record's
// own write or sync failing fails its batch.
func (w *fileWriter) reserve(end int64) {
	if w.unreserved {
		return
	}
	var err error
	if w.reserved, err = reserveZeros(w.journal, w.reserved, end); err != nil {
		w.unreserved = true
		slog.Debug("state journal not written ahead", "journal", JournalPath(w.path), "err", err)
	}
}

// reserveZeros writes zeros in f from reserved (its length, past the
// records) until it holds at least end bytes, doubling it up to reserveMost
// at a time; it returns f's new length. When a write fails, f is cut back to
// the zeros written before it: what the failed write took of a disk nearly
// full is given back (and os.File.WriteAt does not count it).
func reserveZeros(f *os.File, reserved, end int64) (int64, error) {
	if end <= reserved {
		return reserved, nil
	}
	size := max(reserveFirst, min(2*reserved, reserved+reserveMost))
	for size < end {
		size += reserveMost
	}
	for reserved < size {
		n, err := f.WriteAt(zeros[:min(int64(len(zeros)), size-reserved)], reserved)
		reserved += int64(n)
		if err != nil {
			if terr := f.Truncate(reserved); terr != nil {
				slog.Debug("state journal's zeros not cut back", "journal", f.Name(), "err", terr)
			}
			return reserved, err
		}
	}
	return reserved, nil
}

// zeros are what a journal is written ahead with, a block at a time.
var zeros [64 << 10]byte

// syncData makes what was written to f durable: its data, and the
// metadata needed to read it back (fdatasync).
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// journalRecords frames a batch's changes as journal records onto recs:
// the header, the removals, then the components.
func journalRecords(recs []byte, b Batch) []byte {
	if b.Header != nil {
		recs = appendRecord(recs, recHeader, b.Header)
	}
	for _, name := range b.Removed {
		recs = appendRecord(recs, recRemove, []byte(name))
	}
	for _, f := range b.Components {
		recs = appendRecord(recs, recComponent, f.Data)
	}
	return recs
}

func (w *fileWriter) generation(snapshot []byte) error {
	w.markCompacted(snapshot)
	if err := writeAtomic(w.path, snapshot, 0o600); err != nil {
		return err
	}
	return w.start(snapshotDigest(snapshot), len(snapshot), nil)
}

// start begins a journal that continues the snapshot of the digest, with
// recs after its base record, in a file of its own renamed into place: a
// journal is never seen without its base.
func (w *fileWriter) start(digest string, snapSize int, recs []byte) error {
	jp := JournalPath(w.path)
	tmp := jp + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("start state journal: %w", err)
	}
	head := append(appendRecord(nil, recBase, []byte(digest)), recs...)
	reserved := int64(len(head))
	_, err = f.Write(head)
	var zerr error
	if err == nil {
		// As far as there is room (fileWriter.reserve).
		if reserved, zerr = reserveZeros(f, reserved, reserveFirst); zerr != nil {
			slog.Debug("state journal not written ahead", "journal", jp, "err", zerr)
		}
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, jp)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("start state journal %s: %w", jp, unnamed(err))
	}
	syncDir(filepath.Dir(jp))
	if w.journal != nil {
		w.journal.Close()
	}
	w.journal, w.jsize, w.reserved, w.snapSize, w.appended = f, int64(len(head)), reserved, snapSize, len(recs) > 0
	w.unreserved, w.broken = zerr != nil, false
	return nil
}

// markCompacted names, in the journal, the snapshot about to replace the one
// it continues (recCompacted): cut short after the replacement, before the
// journal is gone, the journal reads as older than the snapshot, not as
// changes the snapshot lacks. Not into a journal a write failed in, which
// is never written again (its next generation starts anew); a journal left
// without the mark reads as a snapshot changed since, and is refused
// rather than dropped.
func (w *fileWriter) markCompacted(snapshot []byte) {
	rec := appendRecord(nil, recCompacted, []byte(snapshotDigest(snapshot)))
	if w.journal == nil {
		// The run has not written a journal yet; a run cut short before
		// it may have left one, which this snapshot takes up.
		markLeftJournal(JournalPath(w.path), rec)
		return
	}
	if w.broken {
		return
	}
	n, err := w.journal.WriteAt(rec, w.jsize)
	w.jsize += int64(n)
	w.reserved = max(w.reserved, w.jsize)
	if err == nil {
		err = syncData(w.journal)
	}
	if err != nil {
		w.broken = true
		slog.Debug("state journal not marked compacted", "journal", JournalPath(w.path), "err", err)
	}
}

// markLeftJournal writes the mark rec after the complete records of the
// journal a run cut short left at jp, over a torn record or the zeros
// after them, if there is such a journal.
func markLeftJournal(jp string, rec []byte) {
	data, err := inputfile.Read(jp, inputfile.MaxState)
	if err != nil {
		return // none (or none to read: then it reads as before)
	}
	f, err := os.OpenFile(jp, os.O_WRONLY, 0)
	if err == nil {
		defer f.Close()
		end := 0
		for _, r := range readRecords(data) {
			end += recordHead + 1 + len(r.data)
		}
		if _, err = f.WriteAt(rec, int64(end)); err == nil {
			err = syncData(f)
		}
	}
	if err != nil {
		slog.Debug("state journal left by an earlier run not marked compacted", "journal", jp, "err", err)
	}
}

// Finish compacts the journal into the snapshot and removes it: a state at
// rest is its snapshot alone.
func (w *fileWriter) Finish(_ context.Context, final func() (Batch, error), dirty bool) error {
	if w.journal == nil && !dirty {
		return nil // nothing was ever written
	}
	if w.appended || dirty || w.journal == nil {
		b, err := final()
		if err != nil {
			return err
		}
		w.markCompacted(b.Snapshot)
		if err := writeAtomic(w.path, b.Snapshot, 0o600); err != nil {
			return err
		}
	}
	if w.journal == nil {
		return nil
	}
	w.journal.Close()
	w.journal = nil
	if err := os.Remove(JournalPath(w.path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove state journal: %w", err)
	}
	syncDir(filepath.Dir(JournalPath(w.path)))
	return nil
}

// unnamed is a file operation's error without the file's name: the
// journal's file keeps the name it was created under (its .tmp) after its
// rename, and errors name the journal.
func unnamed(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// syncDir makes a rename or removal in a folder durable; a folder that
// cannot be synced (some filesystems refuse) leaves it to the kernel.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// HeldBy reports whether a run holds the state's lock now (LockProbe).
func (s *FileStore) HeldBy(context.Context) (bool, *Holder, error) { return heldBy(s.path) }
