package build

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
)

// FingerprintExclude are the globs left out of a component's fingerprint:
// those its lifecycle lists, and the run's state files (stateFiles,
// absolute) with their companions (lock, journal) when they are in its
// folder (dir, absolute) under a name gantry does not know for its own by
// the name alone (-s st.json in a stack whose component is its folder):
// each run writes them, and the component would change with every run.
// Those are anchored at the folder ("/st.json").
func FingerprintExclude(lc *manifest.ComponentLifecycle, dir string, stateFiles []string) []string {
	var out []string
	if lc != nil && lc.Fingerprint != nil {
		out = lc.Fingerprint.Exclude
	}
	others := stateFiles[:0:0]
	for _, f := range stateFiles {
		if !component.IsGantryFile(filepath.Base(f)) {
			others = append(others, f)
		}
	}
	if len(others) == 0 {
		return out // the name says it (hub.yaml.state): no path to resolve
	}
	// Compared as they really are: the stack, its folder or the state
	// may be reached through a link (-s link/st.json of a stack opened as
	// real/hub.yaml), and the folder's files are named from its real path.
	dir = realPath(dir)
	inside := func(p string) (string, bool) {
		rel, err := filepath.Rel(dir, realPath(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", false
		}
		return filepath.ToSlash(rel), true
	}
	cloned := false
	for _, f := range others {
		if _, ok := inside(f); !ok {
			continue
		}
		for _, p := range stateCompanions(f) {
			if rel, ok := inside(p); ok {
				if !cloned {
					out, cloned = slices.Clone(out), true // the manifest's list stays as it is
				}
				out = append(out, "/"+component.EscapeGlob(rel))
			}
		}
	}
	return out
}

// StateFilePaths are the real paths (links resolved) of the run's state
// files (absolute) and of their companions — lock, journal, the journal's
// temporary file — which every run writes.
func StateFilePaths(stateFiles []string) map[string]bool {
	out := map[string]bool{}
	for _, f := range stateFiles {
		for _, p := range stateCompanions(f) {
			out[realPath(p)] = true
		}
	}
	return out
}

// stateCompanions are a state file and the files a run writes beside it.
func stateCompanions(f string) []string {
	return []string{f, state.LockPath(f), state.JournalPath(f), state.JournalPath(f) + ".tmp"}
}

// realPath is a path with the links of its folder resolved (the file
// itself may not be there yet), or the path as given when that fails.
func realPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	if parent, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(parent, filepath.Base(p))
	}
	return p
}

// entryLifecycleDigest is a digest of the lifecycle a stack's component
// entry sets, "" when it sets none: editing it (a gate, a probe, a
// timeout) changes what a deploy of the component does, as editing the
// manifest's does.
func entryLifecycleDigest(ref *manifest.ComponentRef) string {
	if ref.Lifecycle == nil {
		return ""
	}
	text, err := elaborate.Canonical(ref.Lifecycle)
	if err != nil {
		// Cannot happen for what a manifest decodes to; a digest that
		// matches nothing recorded redeploys rather than skip.
		text = []byte(err.Error())
	}
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}

// Inputs is what a fingerprint is made of besides the parameters, as the
// state records it: the verb, a salted digest of each upstream output, a
// digest of each file of the folder, the digest of the lifecycle the
// stack's entry sets.
func Inputs(verb, salt, entryLifecycle string, dir *component.DirDigest, upstream map[string]map[string]string) *state.Inputs {
	in := &state.Inputs{Verb: verb, Lifecycle: entryLifecycle}
	for c, outs := range upstream {
		for k, v := range outs {
			if in.Outputs == nil {
				in.Outputs = map[string]string{}
			}
			in.Outputs[c+":"+k] = component.Digest(salt, c, k, v)
		}
	}
	if dir != nil && len(dir.Files) > 0 {
		in.Files = dir.Files
	}
	return in
}

// Changes says what differs between a component's last deploy (its
// record) and now: parameters (old and new values, masked where either is
// secret), upstream outputs, files (the component manifest named as such),
// the verb. A record without inputs (an older state) can tell parameters
// only; when they are all the same, it says it cannot tell more.
func Changes(rec *state.Component, exp *params.Expanded, now *state.Inputs) []plan.ChangeDetail {
	var out []plan.ChangeDetail
	out = append(out, paramChanges(rec.Parameters, exp)...)
	old := rec.Inputs
	if old == nil {
		if len(out) == 0 {
			out = append(out, plan.ChangeDetail{Kind: plan.ChangeUnknown, What: "changed"})
		}
		return out
	}
	if old.Verb != now.Verb {
		out = append(out, plan.ChangeDetail{Kind: plan.ChangeVerb, What: "changed", Old: old.Verb, New: now.Verb})
	}
	switch {
	case old.Lifecycle == now.Lifecycle:
	case old.Lifecycle == "":
		out = append(out, plan.ChangeDetail{Kind: plan.ChangeLifecycle, What: "added"})
	case now.Lifecycle == "":
		out = append(out, plan.ChangeDetail{Kind: plan.ChangeLifecycle, What: "removed"})
	default:
		out = append(out, plan.ChangeDetail{Kind: plan.ChangeLifecycle, What: "changed"})
	}
	out = append(out, mapChanges(plan.ChangeOutput, old.Outputs, now.Outputs)...)
	files := mapChanges(plan.ChangeFile, old.Files, now.Files)
	if d, ok := readsJoined(old.Files, files); ok {
		return append(out, d)
	}
	for _, d := range files {
		if d.Name == manifest.ComponentManifestFile {
			d.Kind, d.Name = plan.ChangeManifest, ""
		}
		out = append(out, d)
	}
	return out
}

// readsJoined is the one detail that says the files read outside the
// folder joined the fingerprint, when that is all that changed of the
// files (changes): the last deploy recorded none of them (old), and the
// folder's own files are as they were — a gantry whose fingerprint left
// them out made it. Adding a base changes a file of the folder.
func readsJoined(old map[string]string, changes []plan.ChangeDetail) (plan.ChangeDetail, bool) {
	for name := range old {
		if strings.HasPrefix(name, "../") {
			return plan.ChangeDetail{}, false
		}
	}
	names := make([]string, 0, len(changes))
	for _, d := range changes {
		if d.What != "added" || !strings.HasPrefix(d.Name, "../") {
			return plan.ChangeDetail{}, false
		}
		names = append(names, d.Name)
	}
	if len(names) == 0 {
		return plan.ChangeDetail{}, false
	}
	return plan.ChangeDetail{Kind: plan.ChangeReads, Name: strings.Join(names, ", "), What: "added"}, true
}

// paramChanges compares the recorded parameters with the expanded ones.
func paramChanges(recorded []state.Parameter, exp *params.Expanded) []plan.ChangeDetail {
	type value struct {
		v, env string
		secret bool
		// pending is the component whose output the value reads and
		// which has not run yet: the value is not known.
		pending string
	}
	old := make(map[string]value, len(recorded))
	for _, p := range recorded {
		old[p.Name] = value{v: p.Value, env: p.Env, secret: p.IsSecret()}
	}
	now := map[string]value{}
	if exp != nil {
		for _, v := range exp.Values {
			now[v.Name] = value{v.Value, v.Env, v.Secret || manifest.LooksSecret(v.Name), v.Pending}
		}
	}
	show := func(v value, secret bool) string {
		if v.pending != "" {
			// Not "": the run gives it a value once that component has
			// run.
			return "(known once " + v.pending + " runs)"
		}
		if secret {
			return plan.Masked
		}
		if v.v == "" {
			return `""`
		}
		return v.v
	}
	var out []plan.ChangeDetail
	for _, name := range slices.Sorted(maps.Keys(now)) {
		n := now[name]
		o, had := old[name]
		secret := n.secret || had && o.secret
		pending := plan.ChangeDetail{Pending: n.pending}
		switch {
		case !had:
			d := pending
			d.Kind, d.Name, d.What, d.New = plan.ChangeParameter, name, "added", show(n, secret)
			out = append(out, d)
		case o.v != n.v:
			d := pending
			d.Kind, d.Name, d.What, d.Old, d.New = plan.ChangeParameter, name, "changed", show(o, secret), show(n, secret)
			out = append(out, d)
		case o.env != n.env:
			out = append(out, plan.ChangeDetail{Kind: plan.ChangeParameter, Name: name, What: "changed", Old: "env " + o.env, New: "env " + n.env})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		if _, ok := now[name]; !ok {
			out = append(out, plan.ChangeDetail{Kind: plan.ChangeParameter, Name: name, What: "removed"})
		}
	}
	return out
}

// mapChanges compares two maps of digests by name.
func mapChanges(kind string, old, now map[string]string) []plan.ChangeDetail {
	var out []plan.ChangeDetail
	names := make([]string, 0, len(old)+len(now))
	for k := range old {
		names = append(names, k)
	}
	for k := range now {
		if _, ok := old[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		o, had := old[k]
		n, has := now[k]
		switch {
		case !had:
			out = append(out, plan.ChangeDetail{Kind: kind, Name: k, What: "added"})
		case !has:
			out = append(out, plan.ChangeDetail{Kind: kind, Name: k, What: "removed"})
		case o != n:
			out = append(out, plan.ChangeDetail{Kind: kind, Name: k, What: "changed"})
		}
	}
	return out
}

// ReadDigests are what the state records of the values a deploy read
// outside the component's parameters (params.Expanded.Reads): a salted
// digest of each, as of the upstream outputs, so that the state holds no
// secret; nil when it read none. Outputs of the components it runs after
// (after) are left out: the fingerprint has them all.
func ReadDigests(salt string, reads map[string]params.Read, after []string) map[string]string {
	var out map[string]string
	for k, r := range reads {
		if r.From != "" && slices.Contains(after, r.From) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(reads))
		}
		out[k] = readDigest(salt, k, r)
	}
	return out
}

func readDigest(salt, key string, r params.Read) string {
	if r.Absent {
		return component.Digest(salt, "absent", key)
	}
	return component.Digest(salt, "read", key, r.Value)
}

// ReadChanges are the values the component's last deploy read outside its
// parameters (recorded, by key) that read otherwise now: one detail each,
// with the new value unless it is secret. A value that cannot be read now
// (an output of a component that has not run) counts as changed: the
// component runs again rather than be skipped on a guess.
//
// from are the components whose outputs those values are now, as far as
// they can be read.
func ReadChanges(salt string, recorded map[string]string, exp *params.Expanded) (out []plan.ChangeDetail, from []string) {
	for _, key := range slices.Sorted(maps.Keys(recorded)) {
		now, err := exp.LookupRead(key)
		if now.From != "" && !slices.Contains(from, now.From) {
			from = append(from, now.From)
		}
		d := plan.ChangeDetail{Kind: plan.ChangeRead, Name: key, What: "changed"}
		switch {
		case err != nil:
			var pe *params.PendingError
			if errors.As(err, &pe) {
				d.Pending = pe.Component
				d.New = "(known once " + pe.Component + " runs)"
			}
		case readDigest(salt, key, now) == recorded[key]:
			continue
		case now.Absent:
			d.What = "removed"
		case now.Secret || manifest.LooksSecret(key):
			d.New = plan.Masked
		case now.Value == "":
			d.New = `""`
		default:
			d.New = now.Value
		}
		out = append(out, d)
	}
	return out, from
}
