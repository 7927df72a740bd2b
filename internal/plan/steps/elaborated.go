package steps

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// Elaborated is the elaborated file a run writes, worked out ahead of the
// step that writes it (PrepareElaborated): encoding the elaborated stack
// costs 5-10 ms at 1,000 components, on the way to the first component,
// and is done on the processor the single-threaded start of a run leaves
// idle, while the plan is built.
type Elaborated struct {
	res  *elaborate.Result
	path string
	done chan struct{}
	// data is the file, or err why it could not be encoded; both unset
	// when the file looked current (then the step encodes it if it no
	// longer is).
	data []byte
	err  error
}

// PrepareElaborated starts working out the elaborated file of res at path
// (unless it looks current already), for the Runtime of the run
// (Runtime.Elaborated). res must not change meanwhile.
func PrepareElaborated(res *elaborate.Result, ws workspace.Workspace, path string) *Elaborated {
	e := &Elaborated{res: res, path: path, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		if _, _, current := elaboratedCurrent(res, ws, path); !current {
			e.data, e.err = elaborate.Marshal(res.ForWrite(), filepath.Dir(path))
		}
	}()
	return e
}

// elaboratedCurrent digests the inputs of the elaborated file at path
// (ok: they could be looked at), and tells whether the file there was
// written from them.
func elaboratedCurrent(res *elaborate.Result, ws workspace.Workspace, path string) (note, inputs string, current bool) {
	note = filepath.Join(ws.Root, "elaborated-"+shortSum(path))
	inputs, ok := elaborateInputs(res, path)
	if !ok {
		return note, "", false
	}
	b, err := os.ReadFile(note)
	return note, inputs, err == nil && string(b) == inputs+" "+fileStamp(path)+"\n"
}

// writeElaborated writes the elaborated file of the run (GANTRY_ELABORATE),
// unless it is there already from the same inputs: encoding it costs a
// second at 10,000 components, on the way to the first component. Its
// inputs are every file the elaboration read (by name, size, time and
// inode), the gantry binary, and where it is written; a note in the
// workspace records them with the size and time of the file written, so
// that a file changed or removed since is written again. Whether it is
// current is decided here, under the state's lock; the encoding is the one
// the run worked out ahead (rt.Elaborated) when it is of the same stack
// and path.
func (rt *Runtime) writeElaborated(path string) error {
	note, inputs, current := elaboratedCurrent(rt.Res, rt.Dirs, path)
	if current {
		return nil
	}
	var data []byte
	var err error
	if e := rt.Elaborated; e != nil && e.res == rt.Res && e.path == path {
		<-e.done
		data, err = e.data, e.err
	}
	if data == nil && err == nil {
		data, err = elaborate.Marshal(rt.Res.ForWrite(), filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, rt.Res.FileMode(), false); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if inputs == "" {
		return nil
	}
	// The note only saves work: when it cannot be written, the next run
	// writes the file again.
	if err := os.MkdirAll(rt.Dirs.Root, 0o700); err == nil {
		_ = atomicfile.Write(note, []byte(inputs+" "+fileStamp(path)+"\n"), 0o600, false)
	}
	return nil
}

// elaborateInputs digests what an elaborated file is made from; false when
// a file cannot be looked at (then the file is always written).
func elaborateInputs(res *elaborate.Result, path string) (string, bool) {
	h := sha256.New()
	write := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	write(abs)
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	write(fileStamp(exe))
	write(res.Dir)
	write(strings.Join(res.SourceDirs, "\x00"))
	for _, f := range res.Files {
		st := fileStamp(f)
		if st == "" {
			return "", false
		}
		write(f)
		write(st)
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// fileStamp tells a file's versions apart without reading it: size,
// modification time in nanoseconds, inode; "" when it cannot be read.
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	ino := uint64(0)
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%d.%d.%d", fi.Size(), fi.ModTime().UnixNano(), ino)
}

func shortSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}
