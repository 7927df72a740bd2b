package landscape

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
)

// Names under which a landscape component shows gantry what its deploy
// reads and makes, so that a component's fingerprint (--resume, and what a
// plan says changed) covers a landscape's inputs.
const (
	// InputsParameter is a parameter of each landscape component: a digest
	// of what its files are evaluated with besides its own folder (the
	// configuration, its effective component.yaml, its templates' folders,
	// its stubs, the crop's action script, its product's SPEC-VERSION).
	InputsParameter = "sow.inputs"
	// ExportsOutput is an output of each landscape component: a digest of
	// its export.yaml. A component importing it runs after it, so its
	// fingerprint changes when the exports do.
	ExportsOutput = "sow.exports"
)

// inputsDigest is the value of InputsParameter for a component.
func (l *Landscape) inputsDigest(c *Component) string {
	h := sha256.New()
	fmt.Fprintf(h, "config %d\n", len(l.Config))
	h.Write(l.Config)
	fmt.Fprintf(h, "meta %d\n", len(c.Meta))
	h.Write(c.Meta)
	fmt.Fprintf(h, "spec %q\n", c.Product.SpecVersion)
	for _, t := range c.Chain {
		sum := "unreadable"
		if d, err := component.DigestDir(t.Dir, nil, nil); err == nil {
			sum = d.Sum
		}
		fmt.Fprintf(h, "template %s %s\n", t.Name, sum)
	}
	abs := absoluteStubs(c)
	files := append(append([]string(nil), c.Stubs...), l.actionScripts(c)...)
	for _, f := range files {
		fmt.Fprintf(h, "file %s %s\n", l.digestName(f, abs[f]), fileDigest(f))
	}
	// The plugins it runs that are not in its own folder (whose files
	// are the fingerprint's already): each plugin's whole folder.
	for _, name := range l.pluginNames(c) {
		p := l.pluginPath(c, name)
		if p == "" || isWithin(c.Dir, p) {
			continue
		}
		sum := "unreadable"
		if d, err := component.DigestDir(filepath.Dir(p), nil, nil); err == nil {
			sum = d.Sum
		}
		fmt.Fprintf(h, "plugin %s %s %s\n", name, l.digestName(filepath.Dir(p), false), sum)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// digestName is how inputsDigest names a file or folder: by its path below
// gantry's tool root, else relative to the landscape's folder (with ".."
// for a stub shared from beside it, say the checkout's common/), so that
// the landscape has the same digests wherever it lies (moved, or a
// worker's at another path, docs/temporal.md) and wherever gantry keeps
// its tool root (a user's cache, a temporary folder); where it lies says
// which file it is, its digest what it holds. A stub written as an
// absolute path (written) outside the landscape keeps it: it stays where
// it is when the landscape moves.
func (l *Landscape) digestName(p string, written bool) string {
	if r, err := filepath.Rel(l.Root, p); err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r)
	}
	if t := sowRoot(); t != "" {
		if r, err := filepath.Rel(t, p); err == nil && filepath.IsLocal(r) {
			return "$SOW/" + filepath.ToSlash(r)
		}
	}
	if written {
		return p
	}
	if r, err := filepath.Rel(l.Root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// absoluteStubs are the stubs of a component and its templates written as
// absolute paths (which lookupStub takes as they are).
func absoluteStubs(c *Component) map[string]bool {
	refs := c.StubRefs
	for _, t := range c.Chain {
		refs = append(append([]stubRef(nil), refs...), t.Stubs...)
	}
	abs := map[string]bool{}
	for _, r := range refs {
		if filepath.IsAbs(r.Name) {
			abs[r.Name] = true
		}
	}
	return abs
}

// pluginNames are the plugins a component's deploy runs, sorted: its setup
// plugins and the entries of its manifest's list; built-ins and control
// plugins left out. The vanished instances' plugins are not: the deploy
// that deletes them records them, and the next one, with nothing vanished,
// would find the component changed (their deletes are steps the plan
// shows; their plugins' changes concern no deploy of the component).
func (l *Landscape) pluginNames(c *Component) []string {
	seen := map[string]bool{}
	var walk func([]*shape)
	walk = func(list []*shape) {
		for _, s := range list {
			if isControl(s.Name) {
				walk(s.Children)
			} else if !keyless(s.Name) {
				seen[s.Name] = true
			}
		}
	}
	if c.Plan == nil {
		return nil
	}
	walk(c.Plan.Setup)
	walk(c.Plan.List)
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// isWithin reports whether p lies in dir.
func isWithin(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(r)
}

// recordsIncomplete says whether sow's records of a component are there but
// do not say it is deployed: the record that does not (the empty string
// when they do) and why. A state, gen or export folder without
// both state.info and export.yaml (its export/ folder was deleted, say), or
// a state.info that says something else than deployed (sow's "error" of a
// deploy or delete that failed). A deploy then runs it again though its
// fingerprint did not change, as sow's deploy -n does.
func (l *Landscape) recordsIncomplete(c *Component) (file, why string) {
	info := filepath.Join(l.StateDir(c.Name), stateInfo)
	exp := filepath.Join(l.ExportDir(c.Name), exportFile)
	if l.view.isFile(info) && l.view.isFile(exp) {
		if says := infoOf(l.view, info); says != infoDeployed {
			return info, fmt.Sprintf("%s says %q", relTo(l.Root, info), says)
		}
		return "", ""
	}
	if _, none := l.ownRecords(l.view, c.Name); none {
		return "", "" // never deployed, or deleted
	}
	for _, f := range []string{info, exp} {
		if !l.view.isFile(f) {
			return f, relTo(l.Root, f) + " is missing"
		}
	}
	return "", ""
}

// ownRecords are sow's records of a component (its state, gen and export
// folders), named for messages, and whether none of them is in the
// landscape's folder (elaborate.Result.OwnRecords), as v has them.
func (l *Landscape) ownRecords(v *recordView, name string) (what string, none bool) {
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return "", false // no component's name: not a question for its records
	}
	dirs := []string{l.StateDir(name), l.GenDir(name), l.ExportDir(name)}
	none = true
	rel := make([]string, len(dirs))
	for i, d := range dirs {
		none = none && !v.exists(d)
		rel[i] = relTo(l.Root, d)
	}
	return "sow's records of it (" + strings.Join(rel, ", ") + ")", none
}

// infoOf is what a state.info says, its first line trimmed, as v has it.
func infoOf(v *recordView, p string) string {
	data, err := v.readFile(p)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line)
}

// fileDigest is the SHA-256 of a file's content, or why it has none.
func fileDigest(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxFile)); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// exportsDigest is the value of ExportsOutput after a deploy: the
// digest's first half, or why there is none.
func (w *work) exportsDigest() string {
	d := fileDigest(filepath.Join(w.export_(), exportFile))
	return d[:min(len(d), 32)]
}
