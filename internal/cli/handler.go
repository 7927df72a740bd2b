package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
)

// withInstallationHandler runs fn between the stack's installation handler's
// "prepare <config>" and "finalize <config>" (sow's meta.installationHandler):
// when prepare fails nothing else runs; finalize runs whatever fn returned.
func (a *app) withInstallationHandler(ctx context.Context, res *elaborate.Result, fn func() error) error {
	h := res.Stack.Meta.InstallationHandler
	if h == nil {
		return fn()
	}
	path := h.Path
	if !filepath.IsAbs(path) {
		if p, err := filepath.Abs(filepath.Join(res.Dir, path)); err == nil && fileExists(p) {
			path = p
		} else if p, err := exec.LookPath(path); err == nil {
			path = p
		}
	}
	config := h.Config
	if config == nil {
		config = map[string]any{}
	}
	data, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("installation handler config: %w", err)
	}
	call := func(ctx context.Context, action string) error {
		err := component.Run(ctx, component.Process{
			Args: []string{path, action, string(data)}, Dir: res.Dir,
			Env: os.Environ(), Stdout: a.stdout, Stderr: a.stderr, Grace: 10 * time.Second,
		})
		if err != nil {
			return fmt.Errorf("installation handler %s %s: %w", h.Path, action, err)
		}
		return nil
	}
	if err := call(ctx, "prepare"); err != nil {
		return withCode(ExitFailed, fmt.Errorf("%w; nothing was run", err))
	}
	runErr := fn()
	// finalize runs even when the run was interrupted: it gets its own context.
	ferr := call(context.Background(), "finalize")
	if runErr != nil {
		if ferr != nil {
			fmt.Fprintln(a.stderr, "gantry: "+ferr.Error())
		}
		return runErr
	}
	return ferr
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
