package state

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// During a run the state is two files: the snapshot (the state document,
// DESIGN 2.4) and a journal next to it (<state>.journal) that the recorder
// appends each change to. Appending a record costs the same whatever the
// size of the stack, where rewriting the document cost its size. The
// journal starts with the digest of the snapshot it continues. Before a
// snapshot replaces it (the recorder compacts the journal into it, in the
// background and at the end of a run), the journal names that snapshot
// (recCompacted): a journal found beside the snapshot it names was cut short
// before it was removed, and is ignored, everything in it being in the
// snapshot. A journal beside a snapshot it neither continues nor names was
// left by a run cut short, and the snapshot changed since: it is refused
// (EditedError), not dropped.
//
// A record is a little-endian uint32 payload length, the payload's CRC-32C,
// and the payload. A torn last record (a kill -9 while appending) fails its
// length or its checksum and ends the journal: what came before it stands.

// JournalPath is the journal of a state file (of the file a link to it
// leads to: companion).
func JournalPath(statePath string) string { return companion(statePath, ".journal") }

// Record kinds, the first byte of a payload.
const (
	recBase      = 'B' // the snapshot's digest, hex: the journal's first record
	recHeader    = 'H' // the stack-level fields, as the snapshot's header writes them
	recComponent = 'C' // one component's record, as the snapshot writes it
	recRemove    = 'D' // a component's name: its record is gone
	// recCompacted is the digest, hex, of the snapshot the journal is
	// about to be compacted into, written before that snapshot replaces
	// its own: a journal found beside the snapshot it names is older than
	// it, and in it.
	recCompacted = 'K'
)

// recordHead is the length and checksum before each payload.
const recordHead = 8

// maxRecord bounds one record: a component's record is a few kilobytes; a
// length past this is a torn or damaged record, not an allocation to make.
const maxRecord = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord frames a payload of the kind onto buf.
func appendRecord(buf []byte, kind byte, payload []byte) []byte {
	var head [recordHead]byte
	n := len(payload) + 1
	binary.LittleEndian.PutUint32(head[:4], uint32(n))
	crc := crc32.Update(crc32.Checksum([]byte{kind}, castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(head[4:], crc)
	buf = append(buf, head[:]...)
	buf = append(buf, kind)
	return append(buf, payload...)
}

// record is one payload read back.
type record struct {
	kind byte
	data []byte
}

// readRecords splits a journal into its records, up to the first that is
// incomplete or fails its checksum.
func readRecords(journal []byte) []record {
	var out []record
	for len(journal) >= recordHead {
		n := binary.LittleEndian.Uint32(journal[:4])
		if n == 0 || n > maxRecord || uint64(len(journal)-recordHead) < uint64(n) {
			break
		}
		payload := journal[recordHead : recordHead+int(n)]
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(journal[4:8]) {
			break
		}
		out = append(out, record{kind: payload[0], data: payload[1:]})
		journal = journal[recordHead+int(n):]
	}
	return out
}

// snapshotDigest is what a journal names its snapshot by.
func snapshotDigest(snapshot []byte) string {
	sum := sha256.Sum256(snapshot)
	return hex.EncodeToString(sum[:])
}

// Files are a state's snapshot and journal, read together.
type Files struct {
	// Snapshot is the state document; nil when there is none.
	Snapshot []byte
	// Journal are the changes since, when they continue this snapshot;
	// nil otherwise.
	Journal []byte
	// Continuable says a run's writer may continue these files as they
	// are (Base): the store read them whole and alone, and holds nothing
	// else a run's first write would have to replace.
	Continuable bool
}

// Sum tells two readings of a state apart.
func (f Files) Sum() [32]byte {
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(f.Snapshot)))
	h.Write(n[:])
	h.Write(f.Snapshot)
	h.Write(f.Journal)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// ReadFiles reads a state's snapshot and the journal that continues it. A
// run may compact its journal into a new snapshot between the two reads: a
// journal that does not continue the snapshot read is read again with the
// snapshot, until the two match or the journal is known to be older than
// the snapshot (then the snapshot holds all of it), and a journal gone
// since a snapshot that has been replaced has the snapshot read again. A
// missing snapshot gives empty Files and no error.
func ReadFiles(path string) (Files, error) {
	for attempt := 0; ; attempt++ {
		before, _ := os.Stat(path)
		snap, err := inputfile.Read(path, inputfile.MaxState)
		if errors.Is(err, os.ErrNotExist) {
			return Files{}, nil
		}
		if err != nil {
			return Files{}, fmt.Errorf("read state %s: %w", path, err)
		}
		if snapshotRead != nil {
			snapshotRead(attempt)
		}
		journal, err := inputfile.Read(JournalPath(path), inputfile.MaxState)
		switch {
		case errors.Is(err, os.ErrNotExist):
			// No journal: the state is at rest, or a run compacted its
			// journal into a new snapshot (renamed over the old, then the
			// journal removed) after the snapshot was read: then the
			// snapshot is read again.
			if after, _ := os.Stat(path); before == nil || after == nil || os.SameFile(before, after) || attempt == lastReadAttempt {
				return Files{Snapshot: snap}, nil
			}
			continue
		case err != nil:
			return Files{}, fmt.Errorf("read state journal %s: %w", JournalPath(path), err)
		}
		recs := readRecords(journal)
		digest := snapshotDigest(snap)
		if len(recs) > 0 && recs[0].kind == recBase && string(recs[0].data) == digest {
			return Files{Snapshot: snap, Journal: journal}, nil
		}
		if compactedInto(recs, digest) {
			// An older journal, in this snapshot: a run compacted it,
			// and was cut short before it removed it.
			return Files{Snapshot: snap}, nil
		}
		// A journal of another snapshot: a newer one, written after this
		// snapshot was read (a run compacted meanwhile), or one this
		// snapshot no longer continues because it was changed after the
		// run writing the journal was cut short.
		again, err := inputfile.Read(path, inputfile.MaxState)
		if err != nil || attempt == lastReadAttempt {
			return Files{Snapshot: snap}, nil
		}
		if string(again) == string(snap) {
			return Files{}, editedError(path, recs)
		}
	}
}

// compactedInto reports whether a journal's records say it was compacted
// into the snapshot of the digest.
func compactedInto(recs []record, digest string) bool {
	for _, r := range recs {
		if r.kind == recCompacted && string(r.data) == digest {
			return true
		}
	}
	return false
}

// EditedError is a state file changed after a run that was writing its
// journal was cut short: the journal holds that run's changes, which the
// file, as it is now, does not continue. Neither is dropped without a word.
type EditedError struct {
	Path, Journal string
	// Components are the components the journal's records change.
	Components []string
}

func (e *EditedError) Error() string {
	what := "that run's changes"
	if len(e.Components) > 0 {
		const shown = 10
		list := strings.Join(e.Components[:min(len(e.Components), shown)], ", ")
		if len(e.Components) > shown {
			list += fmt.Sprintf(" and %d more", len(e.Components)-shown)
		}
		what += " to " + list
	}
	return fmt.Sprintf("state %s is not the file its journal %s continues: it was changed (by hand, or by another tool) after a run that was writing the journal was cut short, and the journal holds %s, which the file lacks; "+
		"put the file back as that run left it, or move the journal aside to drop them (the file then stands as it is)", e.Path, e.Journal, what)
}

// editedError names what the journal of an edited state holds, by the
// components its records change (names, never values).
func editedError(path string, recs []record) error {
	seen := map[string]bool{}
	var names []string
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, r := range recs {
		switch r.kind {
		case recRemove:
			add(string(r.data))
		case recComponent:
			doc, err := decodeDoc(assemble(nil, componentOnlyHeader, map[string][]byte{"": r.data}, []string{""}))
			if err != nil {
				continue
			}
			for name := range doc.Components {
				add(name)
			}
		}
	}
	sort.Strings(names)
	return &EditedError{Path: path, Journal: JournalPath(path), Components: names}
}

// lastReadAttempt bounds ReadFiles' reads again, in both of its races
// with a compaction: a run compacts only once its journal has grown past
// twice the snapshot, so a reader that lost the race this often returns
// the snapshot it last read, whole and valid, rather than chase the run.
const lastReadAttempt = 3

// snapshotRead, when set (by tests), is called by ReadFiles between its
// reads of the snapshot and of the journal, with the attempt's number.
var snapshotRead func(attempt int)

// Decode parses a state's files: the snapshot, then each change the journal
// recorded since.
func (f Files) Decode(path string) (*State, error) {
	if f.Snapshot == nil {
		return nil, nil
	}
	s, err := Decode(path, f.Snapshot)
	if err != nil || f.Journal == nil {
		return s, err
	}
	if err := replay(s, readRecords(f.Journal)); err != nil {
		return nil, fmt.Errorf("state journal %s: %w", JournalPath(path), err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("state %s is not valid: %w", path, err)
	}
	return s, nil
}

// componentOnlyHeader heads a component's record to make a document of it.
var componentOnlyHeader, _ = encodeHeader(&State{Version: FormatVersion})

// decodeDoc parses a document or part of one as Decode does, without its
// checks: decodeFast, else goccy.
func decodeDoc(data []byte) (*State, error) {
	if s, ok := decodeFast(data); ok {
		return s, nil
	}
	s, err := decodeYAML(data)
	if err != nil {
		return nil, errors.New(yaml.FormatError(err, false, false))
	}
	return s, nil
}

// recordMessage is a record's decoding error as the snapshot's are said:
// in words, without the values (a secret's), and without the position in
// the record's own document, which is nowhere in a file.
func recordMessage(err error) string {
	msg := err.Error()
	if m := yamlPos.FindStringIndex(msg); m != nil {
		msg = msg[m[1]:]
	}
	if first, _, ok := strings.Cut(msg, "\n"); ok {
		msg = first // the parser's excerpt of the record would show its values
	}
	return "the record is not valid: " + withoutValues(inWords(msg))
}

// replay applies a journal's records to the state of its snapshot.
func replay(s *State, recs []record) error {
	for i, rec := range recs {
		switch rec.kind {
		case recBase:
			if i != 0 {
				return fmt.Errorf("record %d: a second base", i+1)
			}
		case recHeader:
			h, err := decodeDoc(rec.data)
			if err != nil {
				return fmt.Errorf("record %d: %s", i+1, recordMessage(err))
			}
			if h.Version != FormatVersion {
				return fmt.Errorf("record %d: format version %d; this gantry reads version %d", i+1, h.Version, FormatVersion)
			}
			h.Components = s.Components
			*s = *h
		case recComponent:
			// A component's record is its part of the document: read as
			// the document it would be alone.
			doc, err := decodeDoc(assemble(nil, componentOnlyHeader, map[string][]byte{"": rec.data}, []string{""}))
			if err != nil {
				return fmt.Errorf("record %d: %s", i+1, recordMessage(err))
			}
			if len(doc.Components) != 1 {
				return fmt.Errorf("record %d: %d components, expected one", i+1, len(doc.Components))
			}
			for name, c := range doc.Components {
				if c == nil {
					return fmt.Errorf("record %d: component %s has an empty record", i+1, name)
				}
				s.Components[name] = c
			}
		case recRemove:
			delete(s.Components, string(rec.data))
		case recCompacted:
			// What the journal was about to be compacted into: it
			// changes nothing of the state.
		default:
			return fmt.Errorf("record %d: unknown kind %q", i+1, rec.kind)
		}
	}
	return nil
}
