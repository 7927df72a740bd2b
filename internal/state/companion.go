package state

import (
	"os"
	"path/filepath"
)

// companion is the path of a file that goes with a state file (its lock,
// its journal): beside the file the state path leads to. A state kept
// elsewhere and linked into a stack's folder (atomicfile writes through
// the link) has one lock and one journal however it is reached — two
// checkouts that link one state exclude each other, and a killed run's
// journal is read through the target as through the link.
func companion(statePath, suffix string) string {
	return resolved(statePath) + suffix
}

// resolved is a state path with a symbolic link of the file itself
// followed (a folder's links lead to one place anyway); the path as given
// when it is no link. A dangling link resolves to where it points, where
// the state will be written.
func resolved(path string) string {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return path
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	for range 40 { // a dangling link (or a chain of them), within a bound
		target, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path
		}
	}
	return path
}
