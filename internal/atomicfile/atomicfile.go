// Package atomicfile replaces files so that a reader, or a crash at any
// instant, sees either the old file or the new one, never a mix.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxLinks bounds the links followed to the file written, as the kernel
// does (ELOOP).
const maxLinks = 40

// staleAge is the age past which a temporary file whose writer cannot be
// told is taken for one a killed write left: a write takes milliseconds.
const staleAge = time.Hour

// Write replaces the file at path with data: a temporary file in the same
// folder, with mode (whatever the umask; setuid and setgid kept), renamed
// over the old one. With durable, the data is fsync'ed before the rename
// and the folder after it, so that the new file also survives a power
// loss.
//
// A path that is a link is written through: the file it leads to is
// replaced and the link stays (a state kept elsewhere and linked into the
// stack's folder stays where it is). Temporary files that a killed write
// left next to the file are removed.
func Write(path string, data []byte, mode os.FileMode, durable bool) error {
	target, err := throughLinks(path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(target); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory, not a file", target)
	} else if err == nil && !fi.Mode().IsRegular() {
		// A device, a pipe or a socket (-o /dev/null, /dev/stdout): a file
		// renamed over it would take its place; write to it instead.
		return writeSpecial(target, data)
	}
	dir, base := filepath.Dir(target), filepath.Base(target)
	removeStale(dir, base)
	// The writer's pid in the name tells a later write whether the file is
	// a leftover.
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	// The permissions before the data, so that the data is never readable
	// by more than the final mode lets read it; setuid, setgid and sticky
	// after it, as a write by a process without CAP_FSETID clears them.
	err = tmp.Chmod(mode.Perm())
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil && mode&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
		err = tmp.Chmod(mode)
	}
	if err == nil && durable {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, target)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	if durable {
		if d, err := os.Open(dir); err == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return nil
}

// umask is the process's file mode creation mask, read when the program
// starts: reading it means setting it, which must not happen while other
// goroutines create files.
var umask = func() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}()

// Umasked is the mode a file created with perm gets (perm less the
// process's umask), as os.WriteFile or a shell's redirection would give it:
// Write sets the mode it is given whatever the umask.
func Umasked(perm os.FileMode) os.FileMode { return perm &^ umask }

// tempPrefix starts the names of a file's temporary files.
func tempPrefix(base string) string { return "." + base + ".tmp" }

// throughLinks follows path while it is a link, to the file to replace (it
// need not exist yet).
func throughLinks(path string) (string, error) {
	p := path
	for hops := 0; hops <= maxLinks; hops++ {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) || err == nil && fi.Mode()&os.ModeSymlink == 0 {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", fmt.Errorf("%s: more than %d links to follow (a loop?)", path, maxLinks)
}

// removeStale removes the temporary files of base that writes killed before
// their rename left: those whose writer's process is gone, and those of an
// older gantry (no pid in the name) past staleAge. Best effort: a file that
// cannot be removed stays for the next write.
func removeStale(dir, base string) {
	prefix := tempPrefix(base)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || e.IsDir() {
			continue
		}
		if stale(name[len(prefix):], e) {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
}

// stale tells a leftover from a write under way, by the rest of its name
// after the prefix: "<pid>-<random>", or an older "<random>".
func stale(rest string, e os.DirEntry) bool {
	if pidText, _, ok := strings.Cut(rest, "-"); ok {
		if pid, err := strconv.Atoi(pidText); err == nil && pid > 0 {
			if pid == os.Getpid() {
				return false
			}
			return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
		}
	}
	fi, err := e.Info()
	return err == nil && time.Since(fi.ModTime()) > staleAge
}

// writeSpecial writes data to a file that is not a regular one.
func writeSpecial(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
