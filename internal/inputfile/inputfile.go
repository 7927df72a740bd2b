// Package inputfile reads the files gantry takes as input — manifests, params
// files, states, the values of fromFile — within bounds: only regular files,
// and no more than a size limit. A FIFO would block the read for ever, a
// device such as /dev/zero never ends, and a file of gigabytes would be held
// in memory whole; each is refused with an error that says what the path is.
package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Size limits of the inputs, generous for real files (docs/manifests.md,
// "Limits"): a params file of 700,000 parameters is 25 MiB.
const (
	// MaxManifest bounds a YAML input: stack and component manifests,
	// templates, params files, elaborated files.
	MaxManifest = 64 << 20
	// MaxState bounds a state file.
	MaxState = 256 << 20
	// MaxValue bounds a value read with fromFile.
	MaxValue = 16 << 20
)

// NotRegularError is a path that names something other than a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return e.Path + ": " + Describe(e.Mode)
}

// TooLargeError is a file larger than the limit of its kind of input.
type TooLargeError struct {
	Path  string
	Size  int64 // -1 when the file grew while it was read
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: larger than the limit of %s for this input", e.Path, Bytes(e.Limit))
	}
	return fmt.Sprintf("%s: %s, more than the limit of %s for this input", e.Path, Bytes(e.Size), Bytes(e.Limit))
}

// Describe says what a file mode that is not a regular file's is, for
// messages: "is a directory, not a file".
func Describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "is a directory, not a file"
	case m&fs.ModeNamedPipe != 0:
		return "is a named pipe (FIFO), not a regular file"
	case m&fs.ModeSocket != 0:
		return "is a socket, not a regular file"
	case m&fs.ModeDevice != 0:
		return "is a device, not a regular file"
	case m&fs.ModeSymlink != 0:
		return "is a symbolic link"
	}
	return "is not a regular file"
}

// Bytes formats a size for messages: 64 MiB, 1.5 KiB, 12 bytes.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %ciB", int64(v), "KMGTP"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[exp])
}

// Read returns the content of the regular file at path (symbolic links
// followed) when it holds at most limit bytes. The path is looked at before
// it is opened, so that a FIFO is never opened; it is opened non-blocking and
// looked at again, so that one put in its place meanwhile is not waited on
// either; and no more than limit bytes are read, whatever the file does.
func Read(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, fi, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(path, fi, limit); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(buf.Len()) > limit {
		return nil, &TooLargeError{Path: path, Size: -1, Limit: limit}
	}
	return buf.Bytes(), nil
}

func check(path string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > limit {
		return &TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	return nil
}

// Problem says in a few words what is wrong with reading path, for messages
// that name the path themselves: "not found", "permission denied", "is a
// directory, not a file", "symbolic link loop".
func Problem(err error) string {
	var nr *NotRegularError
	var tl *TooLargeError
	switch {
	case errors.As(err, &nr):
		return Describe(nr.Mode)
	case errors.As(err, &tl):
		if tl.Size < 0 {
			return fmt.Sprintf("larger than the limit of %s for this input", Bytes(tl.Limit))
		}
		return fmt.Sprintf("%s, more than the limit of %s for this input", Bytes(tl.Size), Bytes(tl.Limit))
	case errors.Is(err, syscall.ELOOP):
		return "symbolic link loop (a link that leads back to itself)"
	case errors.Is(err, fs.ErrNotExist):
		return "not found"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.ENOTDIR):
		return "not found (a part of the path is not a directory)"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// IsGzip reports whether data starts as a gzip stream does (1f 8b): the Hub
// CLI compresses its elaborated files and states by default, and a reader
// of YAML says so rather than "invalid UTF-8".
func IsGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }
