package terraform

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/inputfile"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// Bounds on what ReadsOutside follows: a module tree is a handful of
// folders of a few files; one naming the root of a checkout as a module
// stops at these rather than hash the disk, in walk order, so that the same
// tree always gives the same list. Variables for the tests.
var (
	maxModuleFolders = 200
	maxOutsideFiles  = 10000
)

// ReadsOutside lists the files outside the component's folder that the
// module an entry applies reads: the files of its config dir when that is
// outside, and of every local module it calls (module "vpc" { source =
// "../modules/vpc" }), those modules' own local modules included. A
// changed file in one of them changes what an apply does: the component's
// fingerprint covers them (plugin.OutsideReader).
func (tf) ReadsOutside(dir string, s *plugin.Spec) []string {
	cfg, err := parseConfig(s.Config)
	if err != nil || strings.Contains(cfg.Dir, "${") {
		return nil
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil
	}
	module := cfg.Dir
	if !filepath.IsAbs(module) {
		module = filepath.Join(dir, module)
	}
	return outsideFiles(real, module)
}

// outsideFiles are the files of the module in folder start and the local
// modules it calls, transitively, that are outside the folder real, by
// their path from it.
func outsideFiles(real, start string) []string {
	files := map[string]bool{}
	seen := map[string]bool{}
	queue := []string{start}
	for len(queue) > 0 && len(seen) < maxModuleFolders && len(files) < maxOutsideFiles {
		folder, err := filepath.EvalSymlinks(queue[0])
		queue = queue[1:]
		if err != nil || seen[folder] {
			continue // a module not there: terraform init says so
		}
		seen[folder] = true
		for _, src := range localSources(folder) {
			queue = append(queue, filepath.Join(folder, filepath.FromSlash(src)))
		}
		if folder == string(filepath.Separator) || systemDirs[folder] {
			continue // a source climbing to / reads no module there
		}
		if !isOutside(real, folder) {
			// Inside the component's folder (or the folder itself): its
			// files are the folder's, digested already.
			continue
		}
		walkOutside(real, folder, files)
	}
	return slices.Sorted(func(yield func(string) bool) {
		for f := range files {
			if !yield(f) {
				return
			}
		}
	})
}

// walkOutside adds the files under folder that are outside real to files,
// by their path from real: the module's files, and any file its
// expressions may read (templatefile, file) in folders under it. Working
// data (.terraform), version control and gantry's own folders are not the
// module's, nor are folders of terraform files under it, which are modules
// of their own.
func walkOutside(real, folder string, files map[string]bool) {
	_ = filepath.WalkDir(folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && path != folder {
				return fs.SkipDir
			}
			return nil
		}
		if len(files) >= maxOutsideFiles {
			return fs.SkipAll
		}
		if d.IsDir() {
			// A folder of terraform files under the module is a module of
			// its own (examples/complete, modules/x): followed when the
			// module calls it, not read as the module's data.
			if path != folder && (skippedDirs[d.Name()] || path == real || systemDirs[path] || holdsModule(path)) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		// What runs write beside a module — terraform's lock file and
		// state, a stack's state, rendered templates — as the
		// component's own folder leaves them out (component.DigestDir).
		if component.IsGantryFile(d.Name()) || component.IsRenderedTemplate(path) {
			return nil
		}
		if rel, ok := relOutside(real, path); ok {
			files[rel] = true
		}
		return nil
	})
}

// holdsModule reports whether folder holds terraform files.
func holdsModule(folder string) bool {
	entries, err := os.ReadDir(folder)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".tf") || strings.HasSuffix(n, ".tf.json")) {
			return true
		}
	}
	return false
}

// skippedDirs hold working data and history, not a module's definition.
var skippedDirs = map[string]bool{".git": true, ".terraform": true, "node_modules": true, ".gantry": true}

// systemDirs are the kernel's and devices' folders, which a module source
// climbing to / would lead into: never files of a module.
var systemDirs = map[string]bool{"/proc": true, "/sys": true, "/dev": true}

// relOutside is path's slash-separated path from real when it is outside
// it.
func relOutside(real, path string) (string, bool) {
	rel, err := filepath.Rel(real, path)
	if err != nil {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if rel != ".." && !strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// isOutside reports whether folder is neither real nor under it.
func isOutside(real, folder string) bool {
	_, ok := relOutside(real, folder)
	return ok
}

// localSources are the sources of the module calls in folder's files that
// are local paths ("./x", "../x"), as written: terraform copies nothing for
// those, it reads the folder in place.
func localSources(folder string) []string {
	primary, overrides, err := moduleFiles(folder)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range append(primary, overrides...) {
		data, err := inputfile.Read(f, inputfile.MaxManifest)
		if err != nil {
			continue
		}
		text := strings.TrimPrefix(string(data), "\ufeff")
		var sources []string
		if strings.HasSuffix(f, ".json") {
			sources = jsonModuleSources([]byte(text))
		} else {
			sources = nativeModuleSources(text)
		}
		for _, src := range sources {
			if strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") {
				out = append(out, src)
			}
		}
	}
	return out
}

// nativeModuleSources reads the source of each module block of a file in
// terraform's native syntax, when it is a plain string.
func nativeModuleSources(text string) []string {
	toks, err := tokenize(text)
	if err != nil {
		return nil // terraform reports the file when it runs
	}
	var out []string
	for _, b := range topBlocks(toks, "module") {
		if v := b.attribute(toks, "source"); v.kind == tokString && v.text != "" {
			out = append(out, v.text)
		}
	}
	return out
}

// jsonModuleSources reads the sources of the module blocks of a file in
// terraform's JSON syntax: {"module": {"vpc": {"source": "../vpc"}}}, the
// block also as a list of such objects.
func jsonModuleSources(data []byte) []string {
	var file map[string]json.RawMessage
	if json.Unmarshal(data, &file) != nil {
		return nil
	}
	raw, ok := file["module"]
	if !ok {
		return nil
	}
	var blocks []map[string]json.RawMessage
	var one map[string]json.RawMessage
	if err := json.Unmarshal(raw, &one); err == nil {
		blocks = append(blocks, one)
	} else if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []string
	for _, b := range blocks {
		for _, body := range b {
			var call struct {
				Source string `json:"source"`
			}
			if json.Unmarshal(body, &call) == nil && call.Source != "" {
				out = append(out, call.Source)
			}
		}
	}
	return out
}
