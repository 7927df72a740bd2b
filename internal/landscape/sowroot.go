package landscape

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// tool is gantry's own sow tool root: lib/ is SOWLIB, the shell library
// sow's plugins source (pluginutils, utils), and lib/templates the stubs
// sow looks up in its tool root last.
//
//go:embed sow
var tool embed.FS

var (
	rootOnce sync.Once
	rootDir  string
)

// sowRoot is where the tool root is on disk (SOW; SOWLIB is its lib/):
// written once per content into the user's cache, or a private temporary
// folder when there is none. "" when it cannot be written.
func sowRoot() string {
	rootOnce.Do(func() {
		sum := sha256.New()
		_ = fs.WalkDir(tool, "sow", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := tool.ReadFile(p)
				sum.Write([]byte(p))
				sum.Write(data)
			}
			return nil
		})
		id := hex.EncodeToString(sum.Sum(nil))[:16]
		var dir string
		// The user's cache only when it exists: a HOME that is not there
		// (CI, tests) must not be created.
		if c, err := os.UserCacheDir(); err == nil && filepath.IsAbs(c) && isDir(c) {
			dir = filepath.Join(c, "gantry", "sow-"+id)
			if fi, err := os.Stat(filepath.Join(dir, "lib", "pluginutils")); err == nil && fi.Mode().IsRegular() {
				rootDir = dir
				return
			}
			if extract(dir) == nil {
				rootDir = dir
				return
			}
		}
		if d, err := os.MkdirTemp("", "gantry-sow-"); err == nil && extract(filepath.Join(d, "sow")) == nil {
			rootDir = filepath.Join(d, "sow")
		}
	})
	return rootDir
}

// extract writes the tool root into dir, through a temporary folder renamed
// into place, so that a concurrent gantry never sees half of it.
func extract(dir string) error {
	if err := makeDirs(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-sow-")
	if err != nil {
		return err
	}
	err = fs.WalkDir(tool, "sow", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("sow", p)
		target := filepath.Join(tmp, rel)
		if d.IsDir() {
			return makeDirs(target, 0o755)
		}
		data, err := tool.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o755)
	})
	if err == nil {
		if err = os.Rename(tmp, dir); err != nil && exists(filepath.Join(dir, "lib", "pluginutils")) {
			err = nil // another gantry won the race
		}
	}
	os.RemoveAll(tmp)
	return err
}

// SOWLIB is the folder of the shell library for plugins.
func sowLib() string {
	if r := sowRoot(); r != "" {
		return filepath.Join(r, "lib")
	}
	return ""
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
