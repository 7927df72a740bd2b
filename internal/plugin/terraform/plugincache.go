package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// pluginCacheLockPoll is how often an init waiting for the cache tries its
// lock again: flock(2) cannot wait and be interrupted at once.
const pluginCacheLockPoll = 100 * time.Millisecond

// pluginCacheRE finds plugin_cache_dir in a CLI configuration file written
// in HCL (plugin_cache_dir = "…").
var pluginCacheRE = regexp.MustCompile(`(?m)^\s*plugin_cache_dir\s*=\s*"([^"]*)"`)

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

// pluginCache is the folder of the plugin cache terraform is configured
// with in env, as terraform finds it: TF_PLUGIN_CACHE_DIR, else
// plugin_cache_dir in the CLI configuration file (TF_CLI_CONFIG_FILE, else
// OpenTofu's ~/.tofurc or terraform's ~/.terraformrc — HashiCorp's
// terraform reads no .tofurc, and its inits then take turns needlessly),
// with the environment's variables expanded and a relative path taken
// from dir, where terraform runs. "" when there is none, or the folder
// does not exist (terraform then uses no cache).
func pluginCache(env []string, dir string) string {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	cache := vars["TF_PLUGIN_CACHE_DIR"]
	if cache == "" {
		var files []string
		if f := vars["TF_CLI_CONFIG_FILE"]; f != "" {
			files = []string{f}
		} else if home := vars["HOME"]; home != "" {
			files = []string{filepath.Join(home, ".tofurc"), filepath.Join(home, ".terraformrc")}
		}
		for _, f := range files {
			data, err := inputfile.Read(f, inputfile.MaxManifest)
			if err != nil {
				continue
			}
			if setting, ok := configuredCache(data); ok {
				cache = os.Expand(setting, func(k string) string { return vars[k] })
				break
			}
		}
	}
	if cache == "" {
		return ""
	}
	if !filepath.IsAbs(cache) {
		cache = filepath.Join(dir, cache)
	}
	if fi, err := os.Stat(cache); err != nil || !fi.IsDir() {
		return ""
	}
	return cache
}

// lockPluginCache takes the lock on the plugin cache's folder, saying on
// out that it waits when another init holds it, until that one lets go or
// ctx ends. The function it returns lets go.
func lockPluginCache(ctx context.Context, cache string, out io.Writer) (func(), error) {
	if real, err := filepath.EvalSymlinks(cache); err == nil {
		cache = real
	}
	// A folder is opened to be locked, never created: O_RDONLY alone.
	l := flock.New(cache, flock.SetFlag(os.O_RDONLY))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock the terraform plugin cache %s: %w", cache, err)
	}
	if !ok {
		fmt.Fprintf(out, "gantry: waiting for the terraform plugin cache %s: another terraform init is using it\n", cache)
		if _, err := l.TryLockContext(ctx, pluginCacheLockPoll); err != nil {
			_ = l.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("interrupted while waiting for the terraform plugin cache %s", cache)
			}
			return nil, fmt.Errorf("lock the terraform plugin cache %s: %w", cache, err)
		}
	}
	return func() {
		_ = l.Unlock()
		_ = l.Close()
	}, nil
}
