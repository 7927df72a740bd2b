package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/plan"
)

// A component's plugin data — its instances' STATEDIR folders, terraform's
// local state among them — belongs to one deployment (hub.deploymentId).
// Two states deployed from one checkout (staging.state and prod.state, two
// stacks in one database, the file and a database) must never share it:
// prod's terraform would apply over staging's resources, and an undeploy of
// staging would destroy prod's. The first deployment keeps DESIGN 2.5's
// folder, .gantry/state/<component>, marked with its id (ownerFile);
// another one keeps its own, .gantry/state/<component>@<id> ('@' is in no
// component name nor instance key). A folder changes hands only when the
// state that owned it was made anew where it was (a new id at the same
// location): never on a guess that its owner is gone, as a state moved or
// migrated elsewhere keeps its id and must find its data.

// ownerFile, in a component's plugin data folder, names the deployment the
// folder belongs to; lockFile, in the workspace's state folder, is held
// while a run decides which folder is whose.
const (
	ownerFile = "@owner"
	lockFile  = "@lock"
)

// Owner is a deployment that plugin data belongs to.
type Owner struct {
	// ID is the state's hub.deploymentId: a copy or a migration of a state
	// keeps it, and is the same deployment.
	ID string
	// Key names where its state is, the same however its location is
	// spelt: the file's absolute path, or the database, server and stack.
	// It holds no secret.
	Key string
	// Location is where its state is, as messages show it (a database's
	// URL without its password).
	Location string
}

// PluginRootRequest is what PluginRoot decides from.
type PluginRootRequest struct {
	Component string
	Run       Owner
	// Recorded says the run's state records plugin instances of the
	// component: a folder of an earlier gantry, which marked no owner, is
	// then the run's.
	Recorded bool
	// ReadOnly decides without creating, marking or moving anything (a
	// command that changes nothing).
	ReadOnly bool
	// Waiting, when not nil, hears once that the decision waits for
	// another run's (lockWaitNotice).
	Waiting func(string)
}

// PluginRootRefusal is the error PluginRoot would refuse a run with, nil
// when it would not, found before the run starts: without the workspace's
// lock and changing nothing. PluginRoot decides again, under the lock, when
// an instance needs the folder.
func (w Workspace) PluginRootRefusal(req PluginRootRequest) error {
	if err := checkDeploymentID(req.Run.ID); err != nil {
		return err
	}
	req.ReadOnly = true
	_, _, err := decider{w: w, req: req, check: true}.decide()
	return err
}

// PluginRoot is the folder of a component's plugin data for a run's
// deployment (StateRoot for the first one), created and marked if it was
// not; note, when not empty, says what was decided and why, for the
// component's log.
func (w Workspace) PluginRoot(ctx context.Context, req PluginRootRequest) (dir, note string, err error) {
	if err := checkDeploymentID(req.Run.ID); err != nil {
		return "", "", err
	}
	if !req.ReadOnly {
		unlock, err := w.lockOwners(ctx, req.Waiting)
		if err != nil {
			return "", "", err
		}
		defer unlock()
	}
	d := decider{w: w, req: req}
	return d.decide()
}

type decider struct {
	w   Workspace
	req PluginRootRequest
	// check decides as a read-only request does but refuses what a run
	// would refuse (PluginRootRefusal).
	check bool
}

func (d decider) decide() (string, string, error) {
	run := d.req.Run
	shared := d.w.StateRoot(d.req.Component)
	own := shared + "@" + run.ID
	if isDir(own) {
		return own, "", d.mark(own)
	}
	owner, marked, err := readOwner(shared)
	if err != nil {
		return "", "", err
	}
	switch {
	case !isDir(shared):
		return shared, "", d.mark(shared)
	case marked && owner.ID == run.ID:
		return shared, "", d.mark(shared)
	case marked && owner.Key == run.Key:
		note := fmt.Sprintf("plugin data: %s belonged to deployment %s, an earlier state at this state's location (%s): this deployment (%s) takes it over", d.rel(shared), owner.ID, run.Location, run.ID)
		return shared, note, d.mark(shared)
	case marked:
		return d.ownFolder(own, fmt.Sprintf("%s belongs to deployment %s (%s)", d.rel(shared), owner.ID, owner.Location))
	}
	// A folder an earlier gantry made, which names no owner: the
	// deployment's whose state records the component's instances.
	empty, err := onlyOwnerFile(shared)
	if err != nil {
		return "", "", err
	}
	if empty {
		return shared, "", d.mark(shared)
	}
	if d.req.Recorded {
		note := fmt.Sprintf("plugin data: %s, left unmarked by an earlier gantry, is taken as this deployment's (%s, %s), whose state records %s's plugin instances; another state deployed from this folder keeps its own from now on", d.rel(shared), run.ID, run.Location, d.req.Component)
		return shared, note, d.mark(shared)
	}
	why := fmt.Sprintf("%s was left unmarked by an earlier gantry, and this state records no plugin instances of %s", d.rel(shared), d.req.Component)
	if d.req.ReadOnly && !d.check {
		return d.ownFolder(own, why)
	}
	// Whose it is cannot be told: another deployment's whose state records
	// them (which takes it on its next run), or this one's, its state
	// deleted or made anew since. Starting from an empty folder would make
	// terraform create again what the folder's state manages.
	return "", "", fmt.Errorf("plugin data: %s, so whose it is cannot be told; %s's plugins do not start from nothing beside it (terraform would create again what it manages). "+
		"If it is this deployment's (%s, %s; its state was deleted or made anew), adopt it: mv %s %s. "+
		"If it is another deployment's, run that one first (its state records the instances: it takes the folder), then this one. "+
		"If it is no deployment's, remove it",
		why, d.req.Component, run.ID, run.Location, shellPath(shared), shellPath(own))
}

// shellPath is p as a command pasted in the current folder takes it:
// relative to it when below it, else absolute, quoted as the plan quotes
// the words of the commands it suggests.
func shellPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
			p = r
		}
	}
	return plan.ShellWord(p)
}

// ownFolder is the run's own folder, own, next to a shared one another
// deployment has (why).
func (d decider) ownFolder(own, why string) (string, string, error) {
	run := d.req.Run
	note := fmt.Sprintf("plugin data: %s; this deployment (%s, %s) keeps its own in %s", why, run.ID, run.Location, d.rel(own))
	return own, note, d.mark(own)
}

// mark creates dir if it is not there and marks it as the run's (not on
// a read-only run).
func (d decider) mark(dir string) error {
	if d.req.ReadOnly {
		return nil
	}
	return markOwner(dir, d.req.Run)
}

func (d decider) rel(p string) string { return d.w.rel(p) }

// rel is p relative to the workspace's folder, as messages show it.
func (w Workspace) rel(p string) string {
	if r, err := filepath.Rel(filepath.Dir(w.Root), p); err == nil {
		return r
	}
	return p
}

// checkDeploymentID refuses an id that could not name a folder: it comes
// from the state, which may have been edited by hand, and goes into paths
// that undeploys remove.
func checkDeploymentID(id string) error {
	if id == "" {
		return errors.New("internal error: plugin data asked for without a deployment id")
	}
	ok := len(id) <= 64
	for _, r := range id {
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("the state's hub.deploymentId %q cannot name a plugin data folder: expected at most 64 letters, digits, '-' and '_' (gantry makes 16 hex digits; was the state edited by hand?)", id)
	}
	return nil
}

// lockWaitNotice is how long lockOwners waits before saying it waits: a
// run holds the lock for the moments it decides, so a longer wait is a
// holder stopped (Ctrl-Z, a debugger) or a very slow disk. Tests lower it.
var lockWaitNotice = 2 * time.Second

// lockPoll is how often, at most, lockOwners tries again (from a
// millisecond, doubling: holders let go in moments): flock has no timeout,
// and a wait must end with ctx (Ctrl-C).
const lockPoll = 20 * time.Millisecond

// lockOwners holds the workspace's lock on plugin data owners until the
// returned function is called: runs of two states from one folder may run
// at once, and a Temporal worker holds several runs. It waits until ctx
// ends; waiting, when not nil, hears once that it waits.
func (w Workspace) lockOwners(ctx context.Context, waiting func(string)) (func(), error) {
	dir := filepath.Join(w.Root, "state")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the plugin data folder: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the plugin data folders: %w", err)
	}
	start, said, pause := time.Now(), false, time.Millisecond
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, fmt.Errorf("lock the plugin data folders: %s: %w", path, err)
		}
		if !said && waiting != nil && time.Since(start) >= lockWaitNotice {
			said = true
			waiting(fmt.Sprintf("plugin data: waiting for %s, held by another gantry run from this folder while it decides whose plugin data folders are whose (a run stopped with Ctrl-Z holds it until it goes on)", w.rel(path)))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the plugin data lock %s: %w", path, context.Cause(ctx))
		case <-time.After(pause):
		}
		pause = min(2*pause, lockPoll)
	}
}

// RekeyOwners marks as moved to `to` the plugin data folders from's
// deployment owns (gantry state migrate): a state made anew where from was
// would otherwise take them as its predecessor's. It returns how many it
// marked.
func (w Workspace) RekeyOwners(ctx context.Context, from, to Owner) (int, error) {
	root := filepath.Join(w.Root, "state")
	if !isDir(root) {
		return 0, nil
	}
	unlock, err := w.lockOwners(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer unlock()
	owned, err := ownedBy(root, from)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range owned {
		dir := filepath.Join(root, name)
		if err := markOwner(dir, to); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ReleasePluginRoot removes a component's plugin data folder once nothing
// but its owner mark is left in it (after an undeploy removed its
// instances' folders): the next deployment takes StateRoot again.
func (w Workspace) ReleasePluginRoot(ctx context.Context, dir string) error {
	unlock, err := w.lockOwners(ctx, nil)
	if err != nil {
		return err
	}
	defer unlock()
	empty, err := onlyOwnerFile(dir)
	if err != nil || !empty {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readOwner reads the owner mark of a plugin data folder; marked is false
// when it has none. An empty mark is none: a power loss can leave one.
func readOwner(dir string) (o Owner, marked bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || err == nil && len(bytes.TrimSpace(data)) == 0 {
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
		case "key":
			o.Key = v
		case "state":
			o.Location = v
		}
	}
	if o.ID == "" {
		return Owner{}, false, fmt.Errorf("the owner mark %s names no deployment (edited by hand?): remove it if the folder's data is this deployment's", filepath.Join(dir, ownerFile))
	}
	if o.Key == "" {
		o.Key = o.Location
	}
	return o, true, nil
}

// markOwner creates dir if it is not there and marks it as o's. Not
// synced: a mark a power loss takes back leaves the folder unmarked, which
// is the deployment's whose state records the instances (decide) — and
// two syncs a component cost seconds at thousands of components.
func markOwner(dir string, o Owner) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the plugin data folder: %w", err)
	}
	data := []byte("deployment " + o.ID + "\nkey " + oneLine(o.Key) + "\nstate " + oneLine(o.Location) + "\n")
	path := filepath.Join(dir, ownerFile)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := atomicfile.Write(path, data, 0o600, false); err != nil {
		return fmt.Errorf("mark the plugin data folder's owner: %w", err)
	}
	return nil
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// onlyOwnerFile says whether dir holds nothing but an owner mark (and the
// temporary file of a killed write of one), or is missing.
func onlyOwnerFile(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.Name() != ownerFile && !strings.HasPrefix(e.Name(), "."+ownerFile+".tmp") {
			return false, nil
		}
	}
	return true, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ownedBy lists the plugin data folders in root (a workspace's state
// folder) marked as o's: its id at its key.
func ownedBy(root string, o Owner) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		mark, marked, err := readOwner(filepath.Join(root, e.Name()))
		if err == nil && marked && mark.ID == o.ID && mark.Key == o.Key {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
