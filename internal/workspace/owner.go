package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A component's plugin data — its instances' STATEDIR folders, terraform's
// local state among them — belongs to one deployment (hub.deploymentId).
// Two states deployed from one checkout (staging.state and prod.state, or
// the file and a database) must never share it: prod's terraform would
// apply over staging's resources, and an undeploy of staging would destroy
// prod's. The first deployment keeps DESIGN 2.5's folder,
// .gantry/state/<component>, marked with its id (ownerFile); another one
// keeps its own, .gantry/state/<component>@<id> ('@' is in no component
// name nor instance key).

// ownerFile, in a component's plugin data folder, names the deployment the
// folder belongs to.
const ownerFile = "@owner"

// Owner is a deployment that plugin data belongs to.
type Owner struct {
	// ID is the state's hub.deploymentId: a copy or a migration of a state
	// keeps it, and is the same deployment.
	ID string
	// Location is where its state is: the file, absolute, or the database's
	// URL without its password. For messages, and to tell whether the
	// state it names still holds that deployment.
	Location string
}

// PluginRootRequest is what PluginRoot decides from.
type PluginRootRequest struct {
	Component string
	Run       Owner
	// Recorded says the run's state records plugin instances of the
	// component; Default, that it is the default state file next to the
	// manifest. Either makes a folder of an earlier gantry, which marked
	// no owner, the run's.
	Recorded, Default bool
	// Gone says whether the state an owner names no longer holds its
	// deployment (removed, or recreated with another id): its folder is
	// then taken over. Nil: never.
	Gone func(Owner) bool
}

// PluginRoot is the folder of a component's plugin data for a run's
// deployment (StateRoot for the first one), created and marked if it was
// not; note, when not empty, says what was decided and why, for the
// component's log.
func (w Workspace) PluginRoot(req PluginRootRequest) (dir, note string, err error) {
	if req.Run.ID == "" {
		return "", "", errors.New("internal error: plugin data asked for without a deployment id")
	}
	shared := w.StateRoot(req.Component)
	own := shared + "@" + req.Run.ID
	if isDir(own) {
		return own, "", nil
	}
	owner, marked, err := readOwner(shared)
	if err != nil {
		return "", "", err
	}
	switch {
	case !isDir(shared):
		return shared, "", markOwner(shared, req.Run)
	case marked && owner.ID == req.Run.ID:
		if owner.Location != req.Run.Location {
			// Moved or migrated: messages name where it is now.
			return shared, "", markOwner(shared, req.Run)
		}
		return shared, "", nil
	case marked:
		if owner.Location == req.Run.Location || req.Gone != nil && req.Gone(owner) {
			note = fmt.Sprintf("plugin data: %s belonged to deployment %s (%s), which that state no longer holds: this deployment (%s) takes it over", rel(w, shared), owner.ID, owner.Location, req.Run.ID)
			return shared, note, markOwner(shared, req.Run)
		}
		note = fmt.Sprintf("plugin data: %s belongs to deployment %s (%s); this deployment (%s, %s) keeps its own in %s", rel(w, shared), owner.ID, owner.Location, req.Run.ID, req.Run.Location, rel(w, own))
		return own, note, markOwner(own, req.Run)
	}
	// A folder an earlier gantry made, which names no owner.
	empty, err := onlyOwnerFile(shared)
	if err != nil {
		return "", "", err
	}
	if empty || req.Recorded || req.Default {
		return shared, "", markOwner(shared, req.Run)
	}
	note = fmt.Sprintf("plugin data: %s was written by an earlier gantry for a deployment that is not this one (this state records no plugin instances of %s): this deployment (%s, %s) keeps its own in %s", rel(w, shared), req.Component, req.Run.ID, req.Run.Location, rel(w, own))
	return own, note, markOwner(own, req.Run)
}

// ReleasePluginRoot removes a component's plugin data folder once nothing
// but its owner mark is left in it (after an undeploy removed its
// instances' folders): the next deployment takes StateRoot again.
func (w Workspace) ReleasePluginRoot(dir string) error {
	empty, err := onlyOwnerFile(dir)
	if err != nil || !empty {
		return err
	}
	if err := os.Remove(filepath.Join(dir, ownerFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readOwner reads the owner mark of a plugin data folder; marked is false
// when it has none.
func readOwner(dir string) (o Owner, marked bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return Owner{}, false, nil
	}
	if err != nil {
		return Owner{}, false, fmt.Errorf("read the owner of the plugin data in %s: %w", dir, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "deployment":
			o.ID = v
		case "state":
			o.Location = v
		}
	}
	if o.ID == "" {
		return Owner{}, false, fmt.Errorf("the owner mark %s names no deployment (edited by hand?): remove it if the folder's data is this deployment's", filepath.Join(dir, ownerFile))
	}
	return o, true, nil
}

// markOwner creates dir if it is not there and marks it as o's: a
// temporary file renamed over the mark, so that a crash leaves the old
// mark or the new one.
func markOwner(dir string, o Owner) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the plugin data folder: %w", err)
	}
	data := []byte("deployment " + o.ID + "\nstate " + o.Location + "\n")
	path := filepath.Join(dir, ownerFile)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("mark the plugin data folder's owner: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("mark the plugin data folder's owner: %w", err)
	}
	return nil
}

// onlyOwnerFile says whether dir holds nothing but an owner mark (or is
// missing).
func onlyOwnerFile(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.Name() != ownerFile {
			return false, nil
		}
	}
	return true, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// rel names a folder from the workspace's parent, as users see it
// (.gantry/state/db).
func rel(w Workspace, p string) string {
	if r, err := filepath.Rel(filepath.Dir(w.Root), p); err == nil {
		return r
	}
	return p
}
