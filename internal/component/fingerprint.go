package component

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/gantry-dev/gantry/internal/params"
)

// Fingerprint hashes what decides a component's result: the verb, its expanded
// parameters, the outputs of the components it runs after, the files of
// its directory (dirSum, from DirSum) and the digest of the lifecycle the
// stack's entry of it sets (entryLifecycle, "" without one). An unchanged
// fingerprint lets --resume skip the component.
func Fingerprint(verb, dirSum, entryLifecycle string, exp *params.Expanded, upstream map[string]map[string]string) string {
	// The text hashed is kept byte for byte as it always was (each line as
	// fmt's %q would quote it; fingerprintOracle in the tests is the old code):
	// a changed text would make every recorded fingerprint stale. It is
	// built in one buffer and hashed once, for every component of a run.
	b := make([]byte, 0, 256)
	b = append(b, "verb "...)
	b = append(b, verb...)
	b = append(b, '\n')
	if exp != nil {
		for _, v := range exp.Values {
			b = append(b, "param "...)
			b = strconv.AppendQuote(b, v.Name)
			b = append(b, ' ')
			b = strconv.AppendQuote(b, v.Value)
			b = append(b, ' ')
			b = strconv.AppendQuote(b, v.Env)
			b = append(b, '\n')
		}
	}
	comps := make([]string, 0, len(upstream))
	for c := range upstream {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	var keys []string
	for _, c := range comps {
		keys = keys[:0]
		for k := range upstream[c] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b = append(b, "output "...)
			b = strconv.AppendQuote(b, c)
			b = append(b, ' ')
			b = strconv.AppendQuote(b, k)
			b = append(b, ' ')
			b = strconv.AppendQuote(b, upstream[c][k])
			b = append(b, '\n')
		}
	}
	b = append(b, "dir "...)
	b = append(b, dirSum...)
	b = append(b, '\n')
	if entryLifecycle != "" {
		// Only then: the fingerprints recorded without one stay valid.
		b = append(b, "lifecycle "...)
		b = append(b, entryLifecycle...)
		b = append(b, '\n')
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// DirSum digests the files of a component's folder: names, modes, sizes,
// contents and symlink targets, rendered templates and tool caches left out
// (deploys write them).
func DirSum(dir string) (string, error) {
	d, err := DigestDir(dir, nil, nil)
	if err != nil {
		return "", err
	}
	return d.Sum, nil
}

// DirDigest is a component folder's digest: Sum goes into the fingerprint,
// Files says which files made it (a short digest per file, by path relative
// to the folder, slash-separated), so that a plan can name the files that
// changed.
type DirDigest struct {
	Sum   string
	Files map[string]string
}

// DirKey is the key under which a folder's digest with these exclusions and
// files read outside it is kept: components sharing them read it once.
func DirKey(dir string, exclude, reads []string) string {
	key := dir
	if len(exclude) > 0 {
		key += "\x00" + strings.Join(exclude, "\x00")
	}
	if len(reads) > 0 {
		key += "\x00reads\x00" + strings.Join(reads, "\x00")
	}
	return key
}

// DigestDir digests the files of a component's folder as DirSum does,
// leaving out those an exclude glob matches (lifecycle.fingerprint.exclude),
// and adds the files outside it that planning its plugins read (reads: a
// kustomization's ../../base/cm.yaml), by their path from the folder with
// symlinks resolved, as kustomize reads them. Without exclusions and reads
// its Sum is DirSum's, so fingerprints recorded before either existed
// still match.
func DigestDir(dir string, exclude, reads []string) (*DirDigest, error) {
	h := sha256.New()
	files := map[string]string{}
	if err := hashDir(h, dir, exclude, files); err != nil {
		return nil, err
	}
	if len(reads) > 0 {
		// The reads are named from the folder as it really is: a stack
		// reached through a symlink names them as any other path does.
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			real = dir
		}
		for _, p := range reads {
			hashRead(h, real, p, files)
		}
	}
	return &DirDigest{Sum: hex.EncodeToString(h.Sum(nil)), Files: files}, nil
}

// hashRead writes a file read from outside the folder real (symlinks
// resolved) to h and its digest into files, by its path from real (p; an
// absolute p, as plans saved before said it, is named relative to real).
// One that cannot be read is digested as such: it changed.
func hashRead(h io.Writer, real, p string, files map[string]string) {
	rel, abs := filepath.ToSlash(p), p
	if filepath.IsAbs(p) {
		if r, err := filepath.Rel(real, p); err == nil {
			rel = filepath.ToSlash(r)
		}
	} else {
		abs = filepath.Join(real, filepath.FromSlash(p))
	}
	fh := sha256.New()
	w := io.MultiWriter(h, fh)
	hashReadFile(w, abs, rel)
	files[rel] = shortSum(fh)
}

// hashReadFile writes one file read outside the folder to w: its path from
// the folder (rel), its size and its bytes, streamed. What is no regular
// file once links are followed (a device, a named pipe a module's folder
// may hold) is written as such and never opened or read: /dev/zero would
// never end, a pipe would wait for a writer. A file that cannot be read is
// written as missing: it changed.
func hashReadFile(w io.Writer, abs, rel string) {
	fi, err := os.Stat(abs)
	if err == nil && !fi.Mode().IsRegular() {
		fmt.Fprintf(w, "read %q not a regular file: %s\n", rel, fi.Mode().Type())
		return
	}
	var f *os.File
	if err == nil {
		// Non-blocking: a pipe put in its place since is not waited on.
		f, err = os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err == nil {
		defer f.Close()
		fi, err = f.Stat()
	}
	switch {
	case err != nil:
		fmt.Fprintf(w, "read %q missing\n", rel)
	case !fi.Mode().IsRegular():
		fmt.Fprintf(w, "read %q not a regular file: %s\n", rel, fi.Mode().Type())
	default:
		// As the whole file read at once was written, so that digests
		// recorded before stay the same.
		fmt.Fprintf(w, "read %q %d\n", rel, fi.Size())
		if _, err := io.Copy(w, io.LimitReader(f, fi.Size())); err != nil {
			fmt.Fprintf(w, "\nread %q failed\n", rel)
		}
	}
}

// ignoredDirs hold caches and VCS data, not the component's definition.
var ignoredDirs = map[string]bool{".git": true, ".terraform": true, "node_modules": true, ".gantry": true}

// hashDir writes the folder's files to h and a digest of each into files.
// A folder that is a symbolic link is the folder it leads to: its files,
// not the link, are the component's (a component kept in a linked folder,
// a stack reached through a link).
func hashDir(h io.Writer, dir string, exclude []string, files map[string]string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != dir && (ignoredDirs[d.Name()] || Excluded(exclude, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if IsRenderedTemplate(path) || IsGantryFile(d.Name()) || Excluded(exclude, rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fh := sha256.New()
		w := io.MultiWriter(h, fh)
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			fmt.Fprintf(w, "link %q %q\n", rel, target)
			files[rel] = shortSum(fh)
			return nil
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		fmt.Fprintf(w, "file %q %o %d\n", rel, info.Mode().Perm(), info.Size())
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err = io.Copy(w, f); err != nil {
			return err
		}
		files[rel] = shortSum(fh)
		return nil
	})
}

// shortSum is the first 64 bits of a digest, in hex: enough to tell a
// change, short enough to keep one per file and parameter in the state.
func shortSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)[:8]) }

// Digest is a short salted digest of the parts: what the state records of
// a parameter or an output instead of its value.
func Digest(salt string, parts ...string) string {
	h := sha256.New()
	io.WriteString(h, salt)
	for _, p := range parts {
		h.Write([]byte{0})
		io.WriteString(h, p)
	}
	return shortSum(h)
}

// Excluded reports whether a glob of lifecycle.fingerprint.exclude matches
// a path relative to the component's folder (slash-separated): a glob
// without a slash matches a file or folder name at any depth ("*.pid"),
// one with a slash the whole path ("run/*.pid"), one that begins with a
// slash the whole path from the folder ("/st.json": that file of the
// folder only); a folder that matches is left out with all it holds, and
// "dir/**" matches everything below dir.
func Excluded(globs []string, rel string) bool {
	for _, g := range globs {
		anchored := strings.HasPrefix(g, "/")
		g = strings.TrimPrefix(g, "/")
		if strings.HasSuffix(g, "/**") {
			prefix := strings.TrimSuffix(g, "/**")
			if ok, _ := path.Match(prefix, rel); ok {
				return true
			}
			if i := strings.Count(prefix, "/") + 1; strings.Count(rel, "/") >= i {
				parts := strings.SplitN(rel, "/", i+1)
				if ok, _ := path.Match(prefix, strings.Join(parts[:i], "/")); ok {
					return true
				}
			}
			continue
		}
		target := rel
		if !anchored && !strings.Contains(g, "/") {
			target = path.Base(rel)
		}
		if ok, _ := path.Match(g, target); ok {
			return true
		}
	}
	return false
}

// IsRenderedTemplate reports whether path is the output of a template next
// to it, or terraform's state: files a run writes, not the component's
// definition.
func IsRenderedTemplate(path string) bool {
	for _, suffix := range []string{TemplateSuffix, GoTemplateSuffix} {
		if _, err := os.Stat(path + suffix); err == nil {
			return true
		}
	}
	return strings.HasSuffix(path, ".tfstate") || strings.HasSuffix(path, ".tfstate.backup")
}

// IsGantryFile reports whether a file is one gantry writes next to a stack
// (its state, its journal, lock, elaborated manifest, temporary files), by
// its name: a component living in the stack's folder must not change with
// every run. A state of another name is left out by the run
// (lifecycle.fingerprint.exclude's anchored globs).
func IsGantryFile(name string) bool {
	return strings.HasSuffix(name, ".state") || strings.HasSuffix(name, ".state.lock") || name == ".terraform.lock.hcl" ||
		strings.HasSuffix(name, ".state.journal") || strings.HasSuffix(name, ".state.journal.tmp") ||
		strings.HasSuffix(name, ".elaborate") || strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp")
}

// EscapeGlob is a path as a glob that matches it alone: path.Match's
// special characters escaped.
func EscapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
