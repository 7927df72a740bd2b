package component

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/params"
)

// Fingerprint hashes what decides a component's result: the verb, its expanded
// parameters, the outputs of the components it runs after, and the files of
// its directory (dirSum, from DirSum). An unchanged fingerprint lets --resume
// skip the component.
func Fingerprint(verb, dirSum string, exp *params.Expanded, upstream map[string]map[string]string) string {
	h := sha256.New()
	fmt.Fprintf(h, "verb %s\n", verb)
	if exp != nil {
		for _, v := range exp.Values {
			fmt.Fprintf(h, "param %q %q %q\n", v.Name, v.Value, v.Env)
		}
	}
	comps := make([]string, 0, len(upstream))
	for c := range upstream {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	for _, c := range comps {
		keys := make([]string, 0, len(upstream[c]))
		for k := range upstream[c] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(h, "output %q %q %q\n", c, k, upstream[c][k])
		}
	}
	fmt.Fprintf(h, "dir %s\n", dirSum)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// DirSum digests the files of a component's folder: names, modes, sizes,
// contents and symlink targets, rendered templates and tool caches left out
// (deploys write them).
func DirSum(dir string) (string, error) {
	h := sha256.New()
	if err := hashDir(h, dir); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ignoredDirs hold caches and VCS data, not the component's definition.
var ignoredDirs = map[string]bool{".git": true, ".terraform": true, "node_modules": true, ".gantry": true}

func hashDir(h io.Writer, dir string) error {
	if dir == "" {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if path != dir && ignoredDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if isRenderedTemplate(path) || isGantryFile(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			fmt.Fprintf(h, "link %q %q\n", filepath.ToSlash(rel), target)
			return nil
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		fmt.Fprintf(h, "file %q %o %d\n", filepath.ToSlash(rel), info.Mode().Perm(), info.Size())
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		return err
	})
}

// isRenderedTemplate reports whether path is the output of a template next to it.
func isRenderedTemplate(path string) bool {
	for _, suffix := range []string{TemplateSuffix, GoTemplateSuffix} {
		if _, err := os.Stat(path + suffix); err == nil {
			return true
		}
	}
	return strings.HasSuffix(path, ".tfstate") || strings.HasSuffix(path, ".tfstate.backup")
}

// isGantryFile reports whether a file is one gantry writes next to a stack
// (its state, lock, elaborated manifest, temporary files): a component living
// in the stack's folder must not change with every run.
func isGantryFile(name string) bool {
	return strings.HasSuffix(name, ".state") || strings.HasSuffix(name, ".state.lock") || name == ".terraform.lock.hcl" ||
		strings.HasSuffix(name, ".elaborate") || strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp")
}
