package state

import (
	"bytes"
	"strconv"
)

// A Base is a state as its store holds it, cut into the parts the recorder
// keeps: a run's recorder that starts from it writes only what the run
// changes, where it would otherwise write the whole state first (at
// 10,000 components, the first write of a run encoded and wrote 3 MB on
// the way to the first component).
type Base struct {
	// digest names the snapshot, for the journal that continues it; size
	// is its length, which the journal may grow to before compaction.
	digest string
	size   int
	header []byte
	frags  map[string][]byte
	names  []string
}

// Base cuts the files st was decoded from into a recorder's base: nil when
// they cannot be continued as they are — a store that does not say so
// (Continuable), a journal to compact first, or a snapshot that is not
// gantry's own encoding of exactly st's components (a hand edit, an older
// writer): those get a whole write, as before.
func (f Files) Base(st *State) *Base {
	if !f.Continuable || f.Snapshot == nil || f.Journal != nil || st == nil {
		return nil
	}
	header, comps, ok := splitSnapshot(f.Snapshot)
	if !ok {
		return nil
	}
	b := &Base{digest: snapshotDigest(f.Snapshot), size: len(f.Snapshot), header: header,
		frags: make(map[string][]byte, len(st.Components)), names: make([]string, 0, len(st.Components))}
	for len(comps) > 0 {
		// A record is its key line at indent 2 and every line below it,
		// up to the next key line.
		end := len(comps)
		if i := bytes.Index(comps, []byte("\n  \"")); i >= 0 {
			end = i + 1
		}
		frag := comps[:end]
		comps = comps[end:]
		name, ok := fragmentName(frag)
		if !ok || st.Components[name] == nil {
			return nil
		}
		if n := len(b.names); n > 0 && b.names[n-1] >= name {
			return nil // not sorted, or twice: not written by gantry
		}
		b.names = append(b.names, name)
		b.frags[name] = frag
	}
	if len(b.names) != len(st.Components) {
		return nil
	}
	return b
}

// splitSnapshot cuts a document as assemble joins it: the header, then the
// component records after a top-level "components:" line (the last key).
func splitSnapshot(doc []byte) (header, comps []byte, ok bool) {
	const key = "components:\n"
	i := bytes.Index(doc, []byte("\n"+key))
	if i < 0 {
		// No records: then no components key of any other form either.
		return doc, nil, !bytes.HasPrefix(doc, []byte("components:")) && !bytes.Contains(doc, []byte("\ncomponents:"))
	}
	header, comps = doc[:i+1], doc[i+1+len(key):]
	return header, comps, len(comps) > 0 && bytes.HasPrefix(comps, []byte("  \"")) && comps[len(comps)-1] == '\n'
}

// fragmentName reads the quoted key a component's record starts with, as
// encodeComponent writes it.
func fragmentName(frag []byte) (string, bool) {
	line, _, _ := bytes.Cut(frag, []byte("\n"))
	if !bytes.HasPrefix(line, []byte("  \"")) || !bytes.HasSuffix(line, []byte("\":")) {
		return "", false
	}
	name, err := strconv.Unquote(string(line[2 : len(line)-1]))
	return name, err == nil
}
