package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MoveOwners moves the plugin data folders from's deployment owns in w to
// the workspace dst, marked as to's (gantry state migrate to a state whose
// workspace is another folder: runs on it look for their plugin data
// there, and would start terraform from nothing). Each takes DESIGN 2.5's
// folder in dst when it is free, else <component>@<id>. It returns the
// folders it moved to, and, for those it could not move, why.
func (w Workspace) MoveOwners(ctx context.Context, dst Workspace, from, to Owner) (moved []string, err error) {
	root := filepath.Join(w.Root, "state")
	if !isDir(root) {
		return nil, nil
	}
	if err := checkDeploymentID(from.ID); err != nil {
		return nil, err
	}
	// One folder spelt two ways: its lock would be taken twice, and wait
	// for itself.
	if a, err := os.Stat(filepath.Dir(w.Root)); err == nil {
		if b, err := os.Stat(filepath.Dir(dst.Root)); err == nil && os.SameFile(a, b) {
			return nil, fmt.Errorf("internal error: plugin data moved from %s to itself", w.Root)
		}
	}
	// Both held, in one order whichever way the move goes.
	first, second := w, dst
	if dst.Root < w.Root {
		first, second = dst, w
	}
	unlock, err := first.lockOwners(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	unlock2, err := second.lockOwners(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer unlock2()
	owned, err := ownedBy(root, from)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, name := range owned {
		dir := filepath.Join(root, name)
		comp, _, _ := strings.Cut(name, "@")
		target := dst.StateRoot(comp)
		own := target + "@" + from.ID
		if _, err := os.Lstat(own); err == nil {
			// Runs of the deployment take its own folder first: data
			// moved beside it would never be found.
			errs = append(errs, fmt.Errorf("%s: the deployment has %s there already", dir, own))
			continue
		}
		if _, err := os.Lstat(target); err == nil {
			target = own
		}
		if err := os.Rename(dir, target); err != nil {
			// Another file system: copying terraform's state by hand is
			// the user's to decide.
			errs = append(errs, fmt.Errorf("move %s to %s: %w", dir, target, err))
			continue
		}
		if err := markOwner(target, to); err != nil {
			errs = append(errs, err)
		}
		moved = append(moved, target)
	}
	return moved, errors.Join(errs...)
}
