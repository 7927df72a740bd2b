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
)

// writeElaborated writes the elaborated file of the run (GANTRY_ELABORATE),
// unless it is there already from the same inputs: encoding it costs a
// second at 10,000 components, on the way to the first component. Its
// inputs are every file the elaboration read (by name, size, time and
// inode), the gantry binary, and where it is written; a note in the
// workspace records them with the size and time of the file written, so
// that a file changed or removed since is written again.
func (rt *Runtime) writeElaborated(path string) error {
	note := filepath.Join(rt.Dirs.Root, "elaborated-"+shortSum(path))
	inputs, ok := elaborateInputs(rt.Res, path)
	if ok {
		if b, err := os.ReadFile(note); err == nil && string(b) == inputs+" "+fileStamp(path)+"\n" {
			return nil
		}
	}
	data, err := elaborate.Marshal(rt.Res.ForWrite(), filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, 0o644, false); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if !ok {
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
