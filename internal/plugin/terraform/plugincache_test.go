package terraform

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plugin"
)

// TestPluginCache: the cache folder is found where terraform finds it.
func TestPluginCache(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	for _, d := range []string{"env-cache", "rc-cache", "json-cache"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(work, "rel-cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rc := write("rc", "disable_checkpoint = true\nplugin_cache_dir   = \"$HOME/rc-cache\"\n")
	commented := write("commented", "# plugin_cache_dir = \"$HOME/rc-cache\"\n")
	jsonRC := write("rc.json", "{\n  \"plugin_cache_dir\": \"${HOME}/json-cache\"\n}\n")
	jsonLine := write("line.json", `{"disable_checkpoint": true, "plugin_cache_dir": "$HOME/json-cache"}`)
	relative := write("relative", "plugin_cache_dir = \"rel-cache\"\n")
	missing := write("missing", "plugin_cache_dir = \"$HOME/no-such-folder\"\n")
	tofuHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tofuHome, "tofu-cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tofuHome, ".tofurc"), []byte("plugin_cache_dir = \""+filepath.Join(tofuHome, "tofu-cache")+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tofuHome, ".terraformrc"), []byte("plugin_cache_dir = \"/elsewhere\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rcHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(rcHome, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rcHome, ".terraformrc"), []byte("plugin_cache_dir = \"$HOME/cache\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"none", []string{"HOME=" + t.TempDir()}, ""},
		{"the variable", []string{"HOME=" + home, "TF_PLUGIN_CACHE_DIR=" + filepath.Join(home, "env-cache"), "TF_CLI_CONFIG_FILE=" + rc}, filepath.Join(home, "env-cache")},
		{"an empty variable: the file", []string{"HOME=" + home, "TF_PLUGIN_CACHE_DIR=", "TF_CLI_CONFIG_FILE=" + rc}, filepath.Join(home, "rc-cache")},
		{"TF_CLI_CONFIG_FILE", []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + rc}, filepath.Join(home, "rc-cache")},
		{"commented out", []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + commented}, ""},
		{"JSON", []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + jsonRC}, filepath.Join(home, "json-cache")},
		{"JSON on one line", []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + jsonLine}, filepath.Join(home, "json-cache")},
		{"relative to the module", []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + relative}, filepath.Join(work, "rel-cache")},
		{"a folder that does not exist", []string{"HOME=" + home, "TF_CLI_CONFIG_FILE=" + missing}, ""},
		{"a configuration file that does not exist", []string{"HOME=" + rcHome, "TF_CLI_CONFIG_FILE=" + filepath.Join(home, "nothing")}, ""},
		{"~/.terraformrc", []string{"HOME=" + rcHome}, filepath.Join(rcHome, "cache")},
		{"~/.tofurc first", []string{"HOME=" + tofuHome}, filepath.Join(tofuHome, "tofu-cache")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pluginCache(tc.env, work); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
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

// syncBuffer is a buffer written by one goroutine and read by another.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cachingStack makes n modules run by fakeCachingTerraform on one plugin
// cache; deploy applies module i.
func cachingStack(t *testing.T, n int) (cache, calls string, deploy func(ctx context.Context, i int, stderr io.Writer) error) {
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
	deploy = func(ctx context.Context, i int, stderr io.Writer) error {
		return tf{}.Run(ctx, &plugin.Call{
			Action:   plugin.ActionDeploy,
			Entry:    &plugin.Spec{Name: "terraform", Key: "terraform"},
			Instance: &plugin.Instance{Component: filepath.Base(modules[i]), Dir: modules[i], StateRoot: filepath.Join(modules[i], "state")},
			Env:      append(os.Environ(), "CALLS="+calls, "TF_PLUGIN_CACHE_DIR="+cache),
			Stdout:   io.Discard, Stderr: stderr,
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
			errs[i] = deploy(context.Background(), i, io.Discard)
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
// waits, runs once the other lets go, and stops waiting when interrupted.
func TestInitWaitsForTheCache(t *testing.T) {
	cache, calls, deploy := cachingStack(t, 2)
	unlock, err := lockPluginCache(context.Background(), cache, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- deploy(context.Background(), 0, &stderr) }()
	for !strings.Contains(stderr.String(), "waiting for the terraform plugin cache") {
		select {
		case err := <-done:
			t.Fatalf("the deploy did not wait for the cache: %v (stderr %q)", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := os.Stat(calls); err == nil {
		t.Fatal("init ran while the cache was held")
	}
	ctx, cancel := context.WithCancel(context.Background())
	interrupted := make(chan error, 1)
	var stderr2 syncBuffer
	go func() { interrupted <- deploy(ctx, 1, &stderr2) }()
	for !strings.Contains(stderr2.String(), "waiting for the terraform plugin cache") {
		select {
		case err := <-interrupted:
			t.Fatalf("the second deploy did not wait for the cache: %v (stderr %q)", err, stderr2.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
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
}

// FuzzConfiguredCache: any file reads back as a cache folder or none, and
// an HCL line that sets one is always found.
func FuzzConfiguredCache(f *testing.F) {
	for _, seed := range []string{"plugin_cache_dir = \"$HOME/c\"\n", `{"plugin_cache_dir": "/c"}`, `{"plugin_cache_dir": 3}`, "# nothing\n", ""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir, ok := configuredCache(data)
		if !ok && dir != "" {
			t.Fatalf("no setting, yet %q", dir)
		}
		line := append(append([]byte("plugin_cache_dir = \"/fuzz\"\n"), bytes.ReplaceAll(data, []byte("{"), nil)...), '\n')
		if got, ok := configuredCache(line); !ok || got != "/fuzz" {
			t.Fatalf("the first line sets /fuzz: got %q, %v", got, ok)
		}
	})
}
