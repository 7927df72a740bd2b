package component

import (
	"fmt"
	"os"
	"path/filepath"
)

// Templates are confined to their component (docs/manifests.md, Templates):
// a template may only be read from, and render into, the component's folder,
// and lookupfile/lookupdir only find things inside the folders of the
// template chain. The manifest check refuses absolute and ".." patterns; the checks
// here catch what only the file system knows: links that lead out.

// realDir is dir with its links resolved, the root that confined paths must
// stay below.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolve component folder: %w", err)
	}
	return real, nil
}

// inside reports whether path, an already resolved path, lies in root (also
// resolved) or is root itself.
func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && filepath.IsLocal(rel)
}

// confined resolves the links of path and refuses it when it leads out of
// root; it returns the resolved path. what names the path in the error
// ("template", "rendered file").
func confined(root, path, what string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", what, path, err)
	}
	if !inside(root, real) {
		return "", fmt.Errorf("%s %s leads to %s, outside %s; templates are confined to their component and its template chain", what, path, real, root)
	}
	return real, nil
}

// confinedOutput refuses a rendered file that is a link leading out of root
// (or nowhere): writing it would write outside the component. A rendered
// file that does not exist yet is fine: it is created next to its template,
// whose folder is already confined.
func confinedOutput(root, path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	_, err = confined(root, path, "rendered file")
	return err
}

// localPath refuses what cannot name something inside a folder: an absolute
// path, or one that climbs out with "..".
func localPath(rel, what string) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("%s %q: expected a path inside the component (relative, not climbing out with ..)", what, rel)
	}
	return nil
}
