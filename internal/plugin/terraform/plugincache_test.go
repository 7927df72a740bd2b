package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/testenv"
)

// TestPluginCaches: the caches are found wherever terraform or OpenTofu
// may find them.
func TestPluginCaches(t *testing.T) {
	// tempDir is a folder without symbolic links in its path (a TMPDIR
	// under one, as macOS has), as pluginCaches gives them.
	tempDir := func() string {
		d, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	work := tempDir()
	mkdir := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(p, text string) string {
		mkdir(filepath.Dir(p))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// home makes a home folder with these files (relative to it).
	home := func(files map[string]string) string {
		h := tempDir()
		for name, text := range files {
			write(filepath.Join(h, name), text)
		}
		return h
	}
	files := tempDir()
	shared := mkdir(filepath.Join(files, "shared"))
	link := filepath.Join(files, "link")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	blocker := write(filepath.Join(files, "a-file"), "")
	rc := write(filepath.Join(files, "rc"), "disable_checkpoint = true\nplugin_cache_dir   = \"$HOME/rc-cache\"\n")
	write(filepath.Join(work, "rel.tfrc"), "plugin_cache_dir = \"rel-cache\"\n")
	empty := home(nil)
	for _, tc := range []struct {
		name string
		env  []string
		want []string // relative to the env's HOME when not absolute
	}{
		{"none", []string{"HOME=" + empty}, nil},
		{"the variable, over the file", []string{"HOME=" + empty, "TF_PLUGIN_CACHE_DIR=" + shared, "TF_CLI_CONFIG_FILE=" + rc}, []string{shared}},
		{"an empty variable: the file", []string{"HOME=" + empty, "TF_PLUGIN_CACHE_DIR=", "TF_CLI_CONFIG_FILE=" + rc}, []string{"rc-cache"}},
		{"TF_CLI_CONFIG_FILE relative to the module", []string{"HOME=" + empty, "TF_CLI_CONFIG_FILE=rel.tfrc"}, []string{filepath.Join(work, "rel-cache")}},
		{"TERRAFORM_CONFIG", []string{"HOME=" + empty, "TERRAFORM_CONFIG=" + rc}, []string{"rc-cache"}},
		{"commented out", []string{"HOME=" + home(map[string]string{".terraformrc": "# plugin_cache_dir = \"/c\"\n// plugin_cache_dir = \"/c\"\n"})}, nil},
		{"a quoted key", []string{"HOME=" + home(map[string]string{".terraformrc": "\"plugin_cache_dir\" = \"$HOME/q\"\n"})}, []string{"q"}},
		{"JSON", []string{"HOME=" + home(map[string]string{".terraformrc": `{"disable_checkpoint": true, "plugin_cache_dir": "${HOME}/j"}`})}, []string{"j"}},
		{"a folder made", []string{"HOME=" + home(map[string]string{".terraformrc": "plugin_cache_dir = \"$HOME/not/yet\"\n"})}, []string{"not/yet"}},
		{"a folder that cannot be made", []string{"HOME=" + empty, "TF_PLUGIN_CACHE_DIR=" + filepath.Join(blocker, "cache")}, nil},
		{"~/.terraformrc and ~/.tofurc", []string{"HOME=" + home(map[string]string{".terraformrc": "plugin_cache_dir = \"$HOME/t\"\n", ".tofurc": "plugin_cache_dir = \"$HOME/o\"\n"})}, []string{"o", "t"}},
		{"~/.terraform.d", []string{"HOME=" + home(map[string]string{".terraform.d/cache.tfrc": "plugin_cache_dir = \"$HOME/d\"\n", ".terraform.d/credentials.tfrc.json": `{"credentials": {}}`})}, []string{"d"}},
		{"OpenTofu's XDG folder", []string{"HOME=" + home(map[string]string{".config/opentofu/tofurc": "plugin_cache_dir = \"$HOME/x\"\n", ".config/opentofu/more.tfrc.json": `{"plugin_cache_dir": "${HOME}/y"}`})}, []string{"x", "y"}},
		{"one folder by two names", []string{"HOME=" + home(map[string]string{".terraformrc": "plugin_cache_dir = \"" + shared + "\"\n", ".tofurc": "plugin_cache_dir = \"" + link + "\"\n"})}, []string{shared}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := ""
			for _, kv := range tc.env {
				if v, ok := strings.CutPrefix(kv, "HOME="); ok {
					h = v
				}
			}
			env := append([]string{"XDG_CONFIG_HOME="}, tc.env...)
			var want []string
			for _, w := range tc.want {
				if !filepath.IsAbs(w) {
					w = filepath.Join(h, w)
				}
				want = append(want, w)
			}
			var said bytes.Buffer
			got := pluginCaches(env, work, &said)
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
			for _, c := range got {
				if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
					t.Errorf("%s is not a folder: %v", c, err)
				}
			}
			if tc.name == "a folder that cannot be made" && !strings.Contains(said.String(), "cannot be made") {
				t.Errorf("nothing said of the cache left out: %q", said.String())
			}
		})
	}
}

// TestSameFolderOnce: a folder seen by two paths (a bind mount, where
// this test may make one) is locked by the first alone.
func TestSameFolderOnce(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b, other := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "other")
	for _, d := range []string{a, b, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing")
	if got := sameFolderOnce([]string{a, b, missing, other}); !slices.Equal(got, []string{a, b, missing, other}) {
		t.Errorf("different folders: got %q", got)
	}
	if err := exec.Command("mount", "--bind", a, b).Run(); err != nil {
		t.Skipf("no bind mount here (%v): the rest needs one", err)
	}
	defer func() {
		if err := exec.Command("umount", b).Run(); err != nil {
			t.Errorf("umount %s: %v", b, err)
		}
	}()
	if got := sameFolderOnce([]string{a, b, other}); !slices.Equal(got, []string{a, other}) {
		t.Errorf("one folder by two paths: got %q", got)
	}
	// And the whole way: configured by both paths, an init locks the
	// folder once instead of waiting for itself (until the deadline, which
	// only keeps a failure from hanging the test).
	for name, cache := range map[string]string{".terraformrc": a, ".tofurc": b} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("plugin_cache_dir = \""+cache+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	caches := pluginCaches([]string{"HOME=" + dir, "XDG_CONFIG_HOME="}, dir, io.Discard)
	if !slices.Equal(caches, []string{a}) {
		t.Errorf("caches: got %q, want %q", caches, a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	unlock, err := lockPluginCaches(ctx, caches, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

// fakeCachingTerraform is a terraform whose init notes when another init
// runs on the same plugin cache at the same time, and takes long enough
// for two to meet if nothing keeps them apart.
const fakeCachingTerraform = `#!/bin/sh
case "$1" in
init)
  mkdir "$TF_PLUGIN_CACHE_DIR/.busy" 2>/dev/null || echo overlap >> "$CALLS.overlap"
  echo init >> "$CALLS"
  sleep 0.2
  rmdir "$TF_PLUGIN_CACHE_DIR/.busy" 2>/dev/null
  ;;
output) echo '{}' ;;
esac
exit 0
`

// cachingStack makes n modules run by fakeCachingTerraform on one plugin
// cache; deploy applies module i.
func cachingStack(t *testing.T, n int) (cache, calls string, deploy func(ctx context.Context, i int, stderr io.Writer, outside func(func() error) error) error) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	cache = filepath.Join(dir, "cache")
	for _, d := range []string{bin, cache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte(fakeCachingTerraform), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	calls = filepath.Join(dir, "calls")
	modules := make([]string, n)
	for i := range modules {
		modules[i] = filepath.Join(dir, "m"+string(rune('a'+i)))
		if err := os.MkdirAll(modules[i], 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(modules[i], "main.tf"), []byte("# no variables\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	deploy = func(ctx context.Context, i int, stderr io.Writer, outside func(func() error) error) error {
		return tf{}.Run(ctx, &plugin.Call{
			Action:   plugin.ActionDeploy,
			Entry:    &plugin.Spec{Name: "terraform", Key: "terraform"},
			Instance: &plugin.Instance{Component: filepath.Base(modules[i]), Dir: modules[i], StateRoot: filepath.Join(modules[i], "state")},
			Env:      append(os.Environ(), "CALLS="+calls, "TF_PLUGIN_CACHE_DIR="+cache, "HOME="+home),
			Stdout:   io.Discard, Stderr: stderr, Outside: outside,
		})
	}
	return cache, calls, deploy
}

// TestInitsTakeTurnsOnASharedCache: instances deployed at once that share a
// plugin cache run their inits one after the other.
func TestInitsTakeTurnsOnASharedCache(t *testing.T) {
	const n = 4
	_, calls, deploy := cachingStack(t, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = deploy(context.Background(), i, io.Discard, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
	if data, _ := os.ReadFile(calls); strings.Count(string(data), "init\n") != n {
		t.Errorf("inits run: %q, want %d", data, n)
	}
	if data, err := os.ReadFile(calls + ".overlap"); err == nil {
		t.Errorf("two inits ran on the cache at once (%d times)", strings.Count(string(data), "overlap"))
	}
}

// TestInitWaitsForTheCache: an init whose cache another holds says that it
// waits, outside the run's slots, runs once the other lets go, and stops
// waiting when interrupted.
func TestInitWaitsForTheCache(t *testing.T) {
	cache, calls, deploy := cachingStack(t, 2)
	unlock, err := lockPluginCaches(context.Background(), []string{cache}, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	var outsides atomic.Int32
	outside := func(fn func() error) error {
		outsides.Add(1)
		return fn()
	}
	// waiting waits until stderr says the deploy waits for the cache; the
	// deploy must not end before.
	waiting := func(stderr *testenv.SyncBuffer, ended chan error) {
		t.Helper()
		for !strings.Contains(stderr.String(), "waiting for the terraform plugin cache") {
			select {
			case err := <-ended:
				t.Fatalf("the deploy did not wait for the cache: %v (stderr %q)", err, stderr.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	var stderr testenv.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- deploy(context.Background(), 0, &stderr, outside) }()
	waiting(&stderr, done)
	if _, err := os.Stat(calls); err == nil {
		t.Fatal("init ran while the cache was held")
	}
	ctx, cancel := context.WithCancel(context.Background())
	interrupted := make(chan error, 1)
	var stderr2 testenv.SyncBuffer
	go func() { interrupted <- deploy(ctx, 1, &stderr2, outside) }()
	waiting(&stderr2, interrupted)
	cancel()
	if err := <-interrupted; err == nil || !strings.Contains(err.Error(), "interrupted while waiting for the terraform plugin cache") {
		t.Errorf("interrupted: %v", err)
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(calls); string(data) != "init\n" {
		t.Errorf("inits run: %q, want the first instance's alone", data)
	}
	if n := outsides.Load(); n != 2 {
		t.Errorf("the waits ran outside the run's slots %d times, want 2", n)
	}
}

// FuzzConfiguredCache: any file reads back as a cache folder or none,
// without a panic; a folder read from a file that is not JSON is written in
// it as it was read (JSON's values are decoded, escapes and all).
func FuzzConfiguredCache(f *testing.F) {
	for _, seed := range []string{"plugin_cache_dir = \"$HOME/c\"\n", `{"plugin_cache_dir": "/c"}`, `{"plugin_cache_dir": 3}`, "# nothing\n", ""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir, ok := configuredCache(data)
		if ok && !json.Valid(data) && !bytes.Contains(data, []byte(`plugin_cache_dir`)) {
			t.Fatalf("a setting read from a file that does not name it: %q", dir)
		}
		if ok && !json.Valid(data) && !bytes.Contains(data, []byte(`"`+dir+`"`)) {
			t.Fatalf("read %q, which the file does not hold in quotes", dir)
		}
	})
}

// TestInitsOfARunGoInTurn: inits of one run waiting for a cache take it in
// the order they came, each handed it by the one before as it lets go. The
// lock on the folder is tried again only every pluginCacheLockPoll: set to
// an hour here, a wait that needed it would end with the test's deadline.
func TestInitsOfARunGoInTurn(t *testing.T) {
	poll := pluginCacheLockPoll
	pluginCacheLockPoll = time.Hour
	t.Cleanup(func() { pluginCacheLockPoll = poll })
	cache := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	var wg sync.WaitGroup
	// Registered after the poll's restore, so run before it: the waiters
	// are gone before the variable changes back.
	t.Cleanup(func() { cancel(); wg.Wait() })
	unlock, err := lockPluginCaches(ctx, []string{cache}, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	type took struct {
		i   int
		err error
	}
	const n = 4
	order := make(chan took, n)
	for i := range n {
		var out testenv.SyncBuffer
		wg.Go(func() {
			release, err := lockPluginCaches(ctx, []string{cache}, &out, nil)
			order <- took{i, err}
			if err == nil {
				release()
			}
		})
		// The next comes once this one waits; nobody may take the cache
		// before it is let go.
		for !strings.Contains(out.String(), "waiting for the terraform plugin cache") {
			select {
			case got := <-order:
				t.Fatalf("init %d took the cache while it was held (%v)", got.i+1, got.err)
			case <-time.After(time.Millisecond):
			}
		}
	}
	unlock()
	for want := range n {
		got := <-order
		if got.err != nil {
			t.Fatalf("init %d: %v", got.i+1, got.err)
		}
		if got.i != want {
			t.Fatalf("the init that came %d. took the cache %d.", got.i+1, want+1)
		}
	}
}
