package steps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/gantry-dev/gantry/internal/plan"
)

// folderLockPoll is how often a run waiting for another run's folder lock
// tries again: flock(2) cannot wait and be interrupted at once.
const folderLockPoll = 100 * time.Millisecond

// folderLocks are the locks a run holds on the folders of components that
// render templates: from the render until the component's end, so that
// another gantry run (another stack, or the same stack with another state)
// that uses the folder neither renders over these files nor runs the
// component on them meanwhile. Within a run, the plan keeps components that
// share a folder apart (build.FolderResource); the lock is for other runs.
// The kernel drops a lock when its process dies, so a killed run leaves
// nothing to clean up.
type folderLocks struct {
	mu   sync.Mutex
	held map[string]*flock.Flock // by component
}

// lockFolder takes the lock on the component's folder, waiting for another
// run that holds it — outside the run's --parallel slots, saying so in the
// step's log — until it lets go or the run is interrupted.
func (rt *Runtime) lockFolder(ctx context.Context, env plan.Env, info *plan.Component) error {
	dir := info.Dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	// A folder is opened to be locked, never created: O_RDONLY alone.
	l := flock.New(dir, flock.SetFlag(os.O_RDONLY))
	ok, err := l.TryLock()
	if err != nil {
		return fmt.Errorf("lock the folder %s: %w", dir, err)
	}
	if !ok {
		env.Logf("waiting for the folder %s: another gantry run is rendering or running a component there", dir)
		err = env.Outside(func() error {
			_, err := l.TryLockContext(ctx, folderLockPoll)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted while waiting for the folder %s, which another gantry run holds", dir)
			}
			return fmt.Errorf("lock the folder %s: %w", dir, err)
		}
	}
	rt.folders.mu.Lock()
	defer rt.folders.mu.Unlock()
	if rt.folders.held == nil {
		rt.folders.held = map[string]*flock.Flock{}
	}
	rt.folders.held[info.Name] = l
	return nil
}

// unlockFolder lets go of the component's folder, if its run holds it.
func (rt *Runtime) unlockFolder(name string) {
	rt.folders.mu.Lock()
	l := rt.folders.held[name]
	delete(rt.folders.held, name)
	rt.folders.mu.Unlock()
	if l != nil {
		_ = l.Unlock()
		_ = l.Close()
	}
}
