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
	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/ui"
)

// handlerGroup is the prefix of the installation handler's output lines.
const handlerGroup = "installation-handler"

// installationHandler is the stack's meta.installationHandler (sow), resolved
// before anything runs.
type installationHandler struct {
	name   string // the path as the manifest wrote it, for messages
	path   string // the executable to run
	dir    string // where it runs: the stack's folder
	config string // its config as JSON, its second argument
}

// handlerDirs are the folders a relative handler path is looked up in: the
// folder of the stack manifest that declared it, which for a handler
// inherited with fromStack is the base stack's. An elaborated file does not
// say which stack declared it: its path is relative to the stack's folder
// (elaboratedForWrite wrote it so), else — a file written otherwise — to one
// of the base stacks' folders, tried in order.
func handlerDirs(res *elaborate.Result) []string {
	h := res.Stack.Meta.InstallationHandler
	if f := h.Pos.File; f != "" && !samePath(f, res.Stack.File) {
		return []string{filepath.Dir(f)}
	}
	dirs := []string{res.Dir}
	if !isElaborated(res.Stack.File) {
		return dirs
	}
	for _, d := range res.SourceDirs {
		if !samePath(d, res.Dir) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// resolveHandler finds the stack's installation handler: an absolute path, a
// path relative to the folder of the manifest that declared it, or a command
// on PATH. A handler that cannot be found is invalid input: nothing runs
// (exit 2). It returns nil when the stack has none.
func resolveHandler(res *elaborate.Result) (*installationHandler, error) {
	h := res.Stack.Meta.InstallationHandler
	if h == nil {
		return nil, nil
	}
	invalid := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if h.Pos.File != "" {
			msg = h.Pos.String() + ": " + msg
		}
		return withCode(ExitInvalid, fmt.Errorf("%s; nothing was run", msg))
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
	config := h.Config
	if config == nil {
		config = map[string]any{}
	}
	data, err := json.Marshal(config)
	if err != nil {
		return nil, invalid("meta.installationHandler.config: %v", err)
	}
	return &installationHandler{name: h.Path, path: path, dir: res.Dir, config: string(data)}, nil
}

// elaboratedForWrite returns res for writing an elaborated file: a relative
// handler path declared in a base stack is rewritten relative to the stack's
// folder, where the elaborated file's reader resolves it.
func elaboratedForWrite(res *elaborate.Result) *elaborate.Result {
	h := res.Stack.Meta.InstallationHandler
	if h == nil || filepath.IsAbs(h.Path) || h.Pos.File == "" || samePath(h.Pos.File, res.Stack.File) {
		return res
	}
	decl := filepath.Dir(h.Pos.File)
	p := filepath.Join(decl, h.Path)
	if samePath(decl, res.Dir) || !fileExists(p) {
		return res
	}
	rel, err := filepath.Rel(absOr(res.Dir), absOr(p))
	if err != nil {
		return res
	}
	st := *res.Stack
	hc := *h
	hc.Path = filepath.ToSlash(rel)
	st.Meta.InstallationHandler = &hc
	return res.WithStack(&st)
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// samePath tells whether two paths name the same file or folder.
func samePath(a, b string) bool { return absOr(a) == absOr(b) }

// handlerOutput is where the handler's output lines go, like a stack-level
// group's in the plain display: "[installation-handler] line", masked and
// sanitized. With --output json they go to stderr: stdout carries nothing but
// JSON events.
func (a *app) handlerOutput(output string, masker *secret.Masker) ui.Observer {
	if output == "json" {
		return ui.Masked{Masker: masker, Next: ui.NewPlain(a.stderr, ui.Style{})}
	}
	return ui.Masked{Masker: masker, Next: ui.NewPlain(a.stdout, ui.Style{Color: a.color()})}
}

// withInstallationHandler runs fn between the stack's installation handler's
// "prepare <config>" and "finalize <config>" (seed 002, sow's
// meta.installationHandler): when prepare fails nothing else runs and
// finalize is not called; finalize runs whatever fn returned. out shows the
// handler's output. With no handler, fn just runs.
func (a *app) withInstallationHandler(ctx context.Context, h *installationHandler, out ui.Observer, fn func() error) error {
	if h == nil {
		return fn()
	}
	node := &plan.Node{ID: handlerGroup, Kind: "handler", Label: handlerGroup}
	call := func(ctx context.Context, action string) error {
		w := lines.NewWriter(func(line string) { out.Log(node, line); ui.Idle(out) })
		err := component.Run(ctx, component.Process{
			Args: []string{h.path, action, h.config}, Dir: h.dir,
			Env: os.Environ(), Stdout: w, Stderr: w, Grace: 10 * time.Second,
		})
		w.Flush()
		if err != nil {
			return fmt.Errorf("installation handler %s %s: %w", h.name, action, err)
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
