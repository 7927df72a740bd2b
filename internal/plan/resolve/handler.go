package resolve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/plan"
)

// HandlerError is an installation handler that cannot be used: invalid input.
type HandlerError struct{ msg string }

func (e *HandlerError) Error() string { return e.msg }

// handlerDirs are the folders a relative handler path is looked up in: the
// folder of the stack manifest that declared it, which for a handler
// inherited with fromStack is the base stack's. An elaborated file does not
// say which stack declared it: its path is relative to the stack's folder
// (ForWrite wrote it so), else — a file written otherwise — to one of the
// base stacks' folders, tried in order.
func handlerDirs(res *elaborate.Result) []string {
	h := res.Stack.Meta.InstallationHandler
	if f := h.Pos.File; f != "" && !samePath(f, res.Stack.File) {
		return []string{filepath.Dir(f)}
	}
	dirs := []string{res.Dir}
	if !strings.HasSuffix(res.Stack.File, elaborate.Suffix) {
		return dirs
	}
	for _, d := range res.SourceDirs {
		if !samePath(d, res.Dir) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Handler finds the stack's installation handler (sow's
// meta.installationHandler): an absolute path, a path relative to the folder
// of the manifest that declared it, or a command on PATH. One that cannot be
// found is a *HandlerError. It returns nil when the stack has none.
func Handler(res *elaborate.Result) (*plan.Handler, error) {
	h := res.Stack.Meta.InstallationHandler
	if h == nil {
		return nil, nil
	}
	invalid := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if h.Pos.File != "" {
			msg = h.Pos.String() + ": " + msg
		}
		return &HandlerError{msg}
	}
	path := h.Path
	if !filepath.IsAbs(path) {
		found := ""
		for _, d := range handlerDirs(res) {
			if p, err := filepath.Abs(filepath.Join(d, path)); err == nil && fileExists(p) {
				found = p
				break
			}
		}
		if found == "" && filepath.Base(path) == path {
			if p, err := exec.LookPath(path); err == nil {
				found = p
			}
		}
		if found == "" {
			return nil, invalid("meta.installationHandler.path: %s not found in %s (nor on PATH)", path, handlerDirs(res)[0])
		}
		path = found
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, invalid("meta.installationHandler.path: %v", err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil, invalid("meta.installationHandler.path: %s is not an executable file", path)
	}
	config, err := h.ConfigJSON()
	if err != nil {
		return nil, invalid("meta.installationHandler.config: %v", err)
	}
	dir, err := filepath.Abs(res.Dir)
	if err != nil {
		dir = res.Dir
	}
	return &plan.Handler{Name: h.Path, Path: path, Dir: dir, Config: config}, nil
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// samePath tells whether two paths name the same file or folder.
func samePath(a, b string) bool { return absOr(a) == absOr(b) }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
