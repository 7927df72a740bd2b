package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// terraform's shared plugin cache (TF_PLUGIN_CACHE_DIR, or plugin_cache_dir
// in the CLI configuration) is not safe for two "terraform init" at once:
// one unpacks a provider into the cache while the other links the half of
// it that is there, and fails on its checksum (hashicorp/terraform#31964).
// gantry runs the terraform components of a stack in parallel, so the
// inits of the instances that share a cache take turns: each holds a lock
// on the cache's folder (flock(2), which also keeps apart the inits of
// other gantry runs, and which the kernel drops with a killed process).
// Where the cache is configured is read generously — every file terraform
// or OpenTofu may read — since a cache locked needlessly only makes inits
// wait, and one missed lets them collide.

// pluginCacheLockPoll is how often an init waiting for the cache tries its
// lock again: flock(2) cannot wait and be interrupted at once. (A variable
// for a test: the inits of one process must not need it.)
var pluginCacheLockPoll = 100 * time.Millisecond

// pluginCacheRE finds plugin_cache_dir in a CLI configuration file written
// in HCL (plugin_cache_dir = "…"), outside # and // comments (a /* */
// comment is not told apart).
var pluginCacheRE = regexp.MustCompile(`(?m)^\s*"?plugin_cache_dir"?\s*=\s*"([^"]*)"`)

// configuredCache is the plugin_cache_dir a CLI configuration file sets,
// in HCL or in JSON (which terraform reads too), before expansion.
func configuredCache(data []byte) (string, bool) {
	var doc struct {
		PluginCacheDir *string `json:"plugin_cache_dir"`
	}
	if json.Unmarshal(data, &doc) == nil {
		if doc.PluginCacheDir == nil {
			return "", false
		}
		return *doc.PluginCacheDir, true
	}
	if m := pluginCacheRE.FindSubmatch(data); m != nil {
		return string(m[1]), true
	}
	return "", false
}

// cliConfigFiles are the CLI configuration files terraform or OpenTofu
// may read in env, running in dir: the file TF_CLI_CONFIG_FILE names (else
// the legacy TERRAFORM_CONFIG) — relative to dir, as terraform opens it —
// else ~/.terraformrc, ~/.tofurc, OpenTofu's XDG tofurc, and the *.tfrc and
// *.tfrc.json of ~/.terraform.d and of OpenTofu's XDG folder.
func cliConfigFiles(vars map[string]string, dir string) []string {
	for _, k := range []string{"TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG"} {
		if f := vars[k]; f != "" {
			if !filepath.IsAbs(f) {
				f = filepath.Join(dir, f)
			}
			return []string{f}
		}
	}
	home := vars["HOME"]
	if home == "" {
		if u, err := user.Current(); err == nil {
			home = u.HomeDir
		}
	}
	if home == "" {
		return nil
	}
	xdg := vars["XDG_CONFIG_HOME"]
	if xdg == "" {
		xdg = filepath.Join(home, ".config")
	}
	files := []string{filepath.Join(home, ".terraformrc"), filepath.Join(home, ".tofurc"), filepath.Join(xdg, "opentofu", "tofurc")}
	for _, d := range []string{filepath.Join(home, ".terraform.d"), filepath.Join(xdg, "opentofu")} {
		for _, pattern := range []string{"*.tfrc", "*.tfrc.json"} {
			found, _ := filepath.Glob(filepath.Join(d, pattern))
			files = append(files, found...)
		}
	}
	return files
}

// pluginCaches are the folders of the plugin caches terraform may use in
// env, running in dir: TF_PLUGIN_CACHE_DIR, else every plugin_cache_dir of
// the CLI configuration files (cliConfigFiles); the environment's
// variables expanded, a relative path taken from dir, symbolic links
// resolved, sorted, each folder once. A configured folder that does not exist is
// made (terraform makes it when it installs a provider there); one that
// cannot be is left out, with why on out.
func pluginCaches(env []string, dir string, out io.Writer) []string {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var settings []string
	if c := vars["TF_PLUGIN_CACHE_DIR"]; c != "" {
		settings = []string{c}
	} else {
		for _, f := range cliConfigFiles(vars, dir) {
			data, err := inputfile.Read(f, inputfile.MaxManifest)
			if err != nil {
				continue
			}
			if s, ok := configuredCache(data); ok && s != "" {
				settings = append(settings, s)
			}
		}
	}
	var caches []string
	for _, s := range settings {
		cache := os.Expand(s, func(k string) string { return vars[k] })
		if !filepath.IsAbs(cache) {
			cache = filepath.Join(dir, cache)
		}
		if err := os.MkdirAll(cache, 0o755); err != nil {
			fmt.Fprintf(out, "gantry: the terraform plugin cache %s cannot be made (%v): inits on it are not kept apart\n", cache, err)
			continue
		}
		if real, err := filepath.EvalSymlinks(cache); err == nil {
			cache = real
		}
		caches = append(caches, cache)
	}
	slices.Sort(caches)
	return sameFolderOnce(slices.Compact(caches))
}

// sameFolderOnce keeps the first of the folders that are one folder by
// other paths than symbolic links (a bind mount): an init that locked it
// by one path would wait for itself by the other.
func sameFolderOnce(caches []string) []string {
	var kept []string
	var infos []os.FileInfo
	for _, c := range caches {
		fi, err := os.Stat(c)
		if err == nil && slices.ContainsFunc(infos, func(k os.FileInfo) bool { return os.SameFile(k, fi) }) {
			continue
		}
		kept = append(kept, c)
		if err == nil {
			infos = append(infos, fi)
		}
	}
	return kept
}

// lockPluginCaches takes the plugin caches' folders, in order: this
// process's turn on each (cacheTurns), then a lock on it (flock(2)),
// saying on out that it waits when another init has either, until that one
// lets go or ctx ends; outside runs the waits (outside the run's parallel
// slots), nil runs them as they are. A folder that cannot be locked at all
// (a filesystem without flock, as NFS may be) is said on out and keeps
// only its turn: the inits of this process still take turns, those of
// other processes do not. The function it returns lets go of everything
// taken (once, however often it is called).
func lockPluginCaches(ctx context.Context, caches []string, out io.Writer, outside func(func() error) error) (func(), error) {
	var held []*flock.Flock
	var turns []*turnQueue
	var once sync.Once
	// Once: a second call must not hand on a turn another init holds by then.
	unlock := func() {
		once.Do(func() {
			// The lock first: the next init of this process, given the
			// turn, finds the folder free.
			for _, l := range held {
				_ = l.Unlock()
				_ = l.Close()
			}
			for _, q := range turns {
				q.release()
			}
		})
	}
	if outside == nil {
		outside = func(fn func() error) error { return fn() }
	}
	for _, cache := range caches {
		q := cacheTurn(cache)
		// A folder is opened to be locked, never created: O_RDONLY alone.
		l := flock.New(cache, flock.SetFlag(os.O_RDONLY))
		queued := q.take() // nil: the turn is this init's
		mine := queued == nil
		var locked bool
		var err error
		if mine {
			locked, err = l.TryLock()
		}
		if err == nil && !locked {
			fmt.Fprintf(out, "gantry: waiting for the terraform plugin cache %s: another terraform init is using it\n", cache)
			err = outside(func() error {
				if !mine {
					c := queued
					queued = nil // waited for: taken, or left on the way out
					if err := q.wait(ctx, c); err != nil {
						return err
					}
					mine = true
				}
				_, err := l.TryLockContext(ctx, pluginCacheLockPoll)
				return err
			})
			if queued != nil {
				q.leave(queued) // outside did not run the wait
			}
		}
		if mine {
			turns = append(turns, q)
		}
		if err != nil {
			_ = l.Close()
			if ctx.Err() != nil {
				unlock()
				return nil, fmt.Errorf("interrupted while waiting for the terraform plugin cache %s", cache)
			}
			fmt.Fprintf(out, "gantry: the terraform plugin cache %s cannot be locked (%v): the inits of other runs on it are not kept apart\n", cache, err)
			continue
		}
		held = append(held, l)
	}
	return unlock, nil
}
