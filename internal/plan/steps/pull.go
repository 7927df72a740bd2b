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
// night must fail, not hang), its output on the step's log.
func git(ctx context.Context, env plan.Env, dir string, args ...string) error {
	out := env.Stream()
	return component.Run(ctx, component.Process{
		Args:   append([]string{"git"}, args...),
		Dir:    dir,
		Env:    append(os.Environ(), "GIT_TERMINAL_PROMPT=0"),
		Stdout: out,
		Stderr: out,
	})
}

// clone clones a repository at a ref, or updates a clone with a
// fast-forward pull.
func clone(ctx context.Context, env plan.Env, s plan.Clone) plan.Result {
	if s.Update {
		args := []string{"pull", "--ff-only", "origin"}
		if s.Ref != "" {
			args = append(args, s.Ref)
		}
		if err := git(ctx, env, s.Into, args...); err != nil {
			return plan.Fail(fmt.Errorf("update %s from %s: %w", s.Into, s.Remote, err))
		}
		return plan.Ok()
	}
	switch empty, err := emptyDir(s.Into); {
	case err != nil:
		return plan.Fail(err)
	case !empty && !s.Force:
		return plan.Fail(fmt.Errorf("%s is not empty and not a Git clone: --force replaces what it holds", s.Into))
	case !empty:
		if err := os.RemoveAll(s.Into); err != nil {
			return plan.Fail(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(s.Into), 0o755); err != nil {
		return plan.Fail(err)
	}
	args := []string{"clone", "--depth", "1", "--single-branch", "--no-tags"}
	if s.Ref != "" {
		args = append(args, "--branch", s.Ref)
	}
	args = append(args, "--", s.Remote, s.Into)
	if err := git(ctx, env, filepath.Dir(s.Into), args...); err != nil {
		return plan.Fail(fmt.Errorf("clone %s%s: %w", s.Remote, refText(s.Ref), err))
	}
	return plan.Ok()
}

func refText(ref string) string {
	if ref == "" {
		return ""
	}
	return " at " + ref
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
// or the new ones, never half of each.
func place(ctx context.Context, env plan.Env, s plan.Place) plan.Result {
	src := filepath.Join(s.Clone, filepath.FromSlash(s.SubDir))
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return plan.Fail(fmt.Errorf("%s%s has no folder %s", s.Remote, refText(s.Ref), s.SubDir))
	}
	marker := fmt.Sprintf("remote: %s\nref: %s\nsubDir: %s\n", s.Remote, s.Ref, s.SubDir)
	empty, err := emptyDir(s.Dir)
	if err != nil {
		return plan.Fail(err)
	}
	if !empty && !s.Force {
		prev, err := os.ReadFile(filepath.Join(s.Dir, PullMarker))
		if err != nil || !sameOrigin(string(prev), marker) {
			return plan.Fail(fmt.Errorf("%s holds files gantry pull did not put there: --force replaces them", s.Dir))
		}
	}
	if err := os.MkdirAll(filepath.Dir(s.Dir), 0o755); err != nil {
		return plan.Fail(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(s.Dir), "."+filepath.Base(s.Dir)+".pull-")
	if err != nil {
		return plan.Fail(err)
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(ctx, src, tmp); err != nil {
		return plan.Fail(fmt.Errorf("copy %s: %w", s.SubDir, err))
	}
	if commit, err := headCommit(s.Clone); err == nil {
		marker += "commit: " + commit + "\n"
	}
	if err := os.WriteFile(filepath.Join(tmp, PullMarker), []byte(marker), 0o644); err != nil {
		return plan.Fail(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return plan.Fail(err)
	}
	old := ""
	if _, err := os.Lstat(s.Dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(s.Dir, old); err != nil {
			return plan.Fail(err)
		}
	}
	if err := os.Rename(tmp, s.Dir); err != nil {
		if old != "" {
			_ = os.Rename(old, s.Dir)
		}
		return plan.Fail(err)
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	env.Logf("%s%s %s placed in %s", s.Remote, refText(s.Ref), s.SubDir, s.Dir)
	return plan.Ok()
}

// sameOrigin compares the origin lines of two markers (the commit may
// differ: that is what a pull updates).
func sameOrigin(prev, cur string) bool {
	origin := func(m string) string {
		var keep []string
		for _, l := range strings.Split(m, "\n") {
			if l != "" && !strings.HasPrefix(l, "commit:") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	return origin(prev) == origin(cur)
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
