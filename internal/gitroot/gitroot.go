// Package gitroot finds the root of the checkout a folder is in, as gantry
// takes it for runs on workers: a client hands its workers paths relative to
// it, and a worker is started there (docs/temporal.md).
package gitroot

import (
	"os"
	"path/filepath"
)

// Find is the nearest folder at or above dir with a .git (a folder, or the
// file of a worktree or submodule), else dir.
func Find(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}
