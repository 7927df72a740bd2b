package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/plan"
)

// PullMarker is the file gantry pull leaves in a folder it placed sources
// in: where they came from. A later pull replaces such a folder without
// --force; a folder without it is somebody's work and is left alone.
const PullMarker = ".gantry-pull"

// git runs the git CLI, never prompting for credentials (a pull in CI or at
// night must fail, not hang), its output on out.
// An error says how git ended, not its arguments: a remote's URL may carry
// credentials.
func git(ctx context.Context, out io.Writer, dir string, args ...string) error {
	err := component.Run(ctx, component.Process{
		Args:   append([]string{"git", "-c", "advice.detachedHead=false"}, args...),
		Dir:    dir,
		Env:    append(os.Environ(), "GIT_TERMINAL_PROMPT=0"),
		Stdout: out,
		Stderr: out,
	})
	var ee *component.ExitError
	var se *component.StoppedError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("git %s was stopped (it exited with status 0 on SIGTERM)", args[0])
	case errors.As(err, &ee) && ee.Signal != "":
		return fmt.Errorf("git %s was killed by %s", args[0], ee.Signal)
	case errors.As(err, &ee):
		return fmt.Errorf("git %s exited with status %d", args[0], ee.Code)
	}
	return err
}

// clone clones a repository at a ref, or updates a clone with a
// fast-forward pull. A clone replacing a folder (Force) is made beside it
// and swapped in: a failed clone leaves the folder as it was.
func clone(ctx context.Context, env plan.Env, s plan.Clone) plan.Result {
	if s.Update {
		return update(ctx, env, s)
	}
	empty, err := emptyDir(s.Into)
	switch {
	case err != nil:
		return plan.Fail(fmt.Errorf("read %s: %w", s.Into, err))
	case !empty && !s.Force:
		return plan.Fail(fmt.Errorf("%s is not empty and not a Git clone: --force replaces what it holds", s.Into))
	}
	if err := os.MkdirAll(filepath.Dir(s.Into), 0o755); err != nil {
		return plan.Fail(fmt.Errorf("make the folder of %s: %w", s.Into, err))
	}
	into := s.Into
	if !empty {
		tmp, err := os.MkdirTemp(filepath.Dir(s.Into), "."+filepath.Base(s.Into)+".pull-")
		if err != nil {
			return plan.Fail(fmt.Errorf("make a folder beside %s: %w", s.Into, err))
		}
		defer os.RemoveAll(tmp)
		into = filepath.Join(tmp, "clone")
	}
	args := []string{"clone", "--depth", "1", "--single-branch", "--no-tags"}
	if s.Ref != "" {
		args = append(args, "--branch", s.Ref)
	}
	args = append(args, "--", s.Remote, into)
	if err := git(ctx, env.Stream(), filepath.Dir(into), args...); err != nil {
		return plan.Fail(fmt.Errorf("clone %s%s: %w", plan.RemoteText(s.Remote), plan.RefText(s.Ref), err))
	}
	if into != s.Into {
		if err := swapIn(into, s.Into); err != nil {
			return plan.Fail(err)
		}
	}
	return plan.Ok()
}

// update fast-forwards a clone, which must be a clone of the remote the
// stack names: a folder cloned from elsewhere (somebody's own work) is left
// alone.
func update(ctx context.Context, env plan.Env, s plan.Clone) plan.Result {
	var origin strings.Builder
	if err := git(ctx, &origin, s.Into, "remote", "get-url", "origin"); err != nil || strings.TrimSpace(origin.String()) != s.Remote {
		return plan.Fail(fmt.Errorf("%s is a Git clone, but not of %s (its origin: %s): --force replaces it",
			s.Into, plan.RemoteText(s.Remote), plan.RemoteText(strings.TrimSpace(firstLine(origin.String())))))
	}
	args := []string{"pull", "--ff-only", "origin"}
	if s.Ref != "" {
		args = append(args, s.Ref)
	}
	if err := git(ctx, env.Stream(), s.Into, args...); err != nil {
		return plan.Fail(fmt.Errorf("update %s from %s: %w", s.Into, plan.RemoteText(s.Remote), err))
	}
	return plan.Ok()
}

// swapIn puts the folder from in place of to: to is renamed aside, from
// renamed in, and what was there removed; an interrupted swap leaves the old
// folder or the new one.
func swapIn(from, to string) error {
	old := ""
	if _, err := os.Lstat(to); err == nil {
		old = from + ".old"
		if err := os.Rename(to, old); err != nil {
			return fmt.Errorf("move %s aside: %w", to, err)
		}
	}
	if err := os.Rename(from, to); err != nil {
		if old != "" {
			_ = os.Rename(old, to)
		}
		return fmt.Errorf("put the new %s in place: %w", to, err)
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	return nil
}

// emptyDir reports whether dir is missing or empty.
func emptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return len(names) == 0, err
}

// place puts a sub-folder of a clone in a component's folder: built beside
// it, then swapped in, so that an interrupted pull leaves the old sources
// or the new ones, never half of each. The sub-folder must be a folder of
// the clone, links resolved: a repository cannot make pull copy files from
// elsewhere.
func place(ctx context.Context, env plan.Env, s plan.Place) plan.Result {
	src, err := cloneFolder(s.Clone, s.SubDir)
	if err != nil {
		return plan.Fail(fmt.Errorf("%s%s: %w", plan.RemoteText(s.Remote), plan.RefText(s.Ref), err))
	}
	marker := fmt.Sprintf("remote: %s\nsubDir: %s\n", plan.RemoteText(s.Remote), s.SubDir)
	empty, err := emptyDir(s.Dir)
	if err != nil {
		return plan.Fail(fmt.Errorf("read %s: %w", s.Dir, err))
	}
	if !empty && !s.Force {
		prev, err := os.ReadFile(filepath.Join(s.Dir, PullMarker))
		if err != nil || !strings.HasPrefix(string(prev), marker) {
			return plan.Fail(fmt.Errorf("%s holds files gantry pull did not put there: --force replaces them", s.Dir))
		}
	}
	if err := os.MkdirAll(filepath.Dir(s.Dir), 0o755); err != nil {
		return plan.Fail(fmt.Errorf("make the folder of %s: %w", s.Dir, err))
	}
	tmp, err := os.MkdirTemp(filepath.Dir(s.Dir), "."+filepath.Base(s.Dir)+".pull-")
	if err != nil {
		return plan.Fail(fmt.Errorf("make a folder beside %s: %w", s.Dir, err))
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(ctx, src, tmp); err != nil {
		return plan.Fail(fmt.Errorf("copy %s: %w", s.SubDir, err))
	}
	marker += "ref: " + s.Ref + "\n"
	if commit, err := headCommit(s.Clone); err == nil {
		marker += "commit: " + commit + "\n"
	}
	if err := os.WriteFile(filepath.Join(tmp, PullMarker), []byte(marker), 0o644); err != nil {
		return plan.Fail(fmt.Errorf("write %s: %w", PullMarker, err))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return plan.Fail(err)
	}
	if err := swapIn(tmp, s.Dir); err != nil {
		return plan.Fail(err)
	}
	env.Logf("%s%s %s placed in %s", plan.RemoteText(s.Remote), plan.RefText(s.Ref), s.SubDir, s.Dir)
	return plan.Ok()
}

// cloneFolder resolves sub inside the clone, links included, and requires a
// folder there.
func cloneFolder(clone, sub string) (string, error) {
	root, err := filepath.EvalSymlinks(clone)
	if err != nil {
		return "", err
	}
	src, err := filepath.EvalSymlinks(filepath.Join(clone, filepath.FromSlash(sub)))
	if err != nil {
		return "", fmt.Errorf("no folder %s", sub)
	}
	if rel, err := filepath.Rel(root, src); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%s leads out of the repository", sub)
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", sub)
	}
	return src, nil
}

// headCommit reads the commit a clone is at, from its .git folder.
func headCommit(clone string) (string, error) {
	head, err := os.ReadFile(filepath.Join(clone, ".git", "HEAD"))
	if err != nil {
		return "", err
	}
	h := strings.TrimSpace(string(head))
	ref, ok := strings.CutPrefix(h, "ref: ")
	if !ok {
		return h, nil
	}
	b, err := os.ReadFile(filepath.Join(clone, ".git", filepath.FromSlash(ref)))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// copyTree copies the files, folders and links of src into dst, which
// exists, leaving out Git's own folder.
func copyTree(ctx context.Context, src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(src, path)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			return copyFile(path, to, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
