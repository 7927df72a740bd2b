package action

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
)

// bundleFormat is the version of the Bundle: a worker refuses a bundle of
// another (a gantry of another version on one side).
const bundleFormat = 1

// Bundle is what a worker rebuilds a run from, with its own checkout
// (docs/temporal.md): where the stack lies in the checkout, the options,
// the parameters as the client locked them (from its environment, params
// files and terminal), the state as the run found it. It holds secrets (the
// locked parameters, the state): it lives in the state's database, never in
// the workflow.
type Bundle struct {
	Format int    `json:"format"`
	Stack  string `json:"stack"`
	Verb   string `json:"verb"`
	RunID  string `json:"runId"`
	// Root is the client's checkout, for messages; Manifest, Params and
	// Elaborate are paths below it.
	Root        string          `json:"root"`
	Manifest    string          `json:"manifest"`
	Params      []string        `json:"params,omitempty"`
	Elaborate   string          `json:"elaborate,omitempty"`
	State       string          `json:"state"`
	Selection   build.Selection `json:"selection"`
	Resume      bool            `json:"resume,omitempty"`
	Force       bool            `json:"force,omitempty"`
	Yes         bool            `json:"yes,omitempty"`
	Interactive bool            `json:"interactive,omitempty"`
	KeepTFVars  bool            `json:"keepTFVars,omitempty"`
	Parallel    int             `json:"parallel"`
	// Before is the state document as the run found it.
	Before []byte `json:"before,omitempty"`
	// Records are a sow landscape's records (gen/, state/, export/) as
	// the client's plan read them (elaborate.Result.Records): the run
	// changes them, and a worker that joins it later plans from these.
	Records      []byte          `json:"records,omitempty"`
	DeploymentID string          `json:"deploymentId,omitempty"`
	Locked       []*params.Value `json:"locked"`
	// Plan is the plan as the client built it (plan.json): what a client
	// that attaches later shows.
	Plan []byte `json:"plan"`
	// Fingerprint names the run as the client built it; Parts are what it
	// is made of, so that a worker can name what differs.
	Fingerprint string       `json:"fingerprint"`
	Parts       *Fingerprint `json:"parts"`
}

// differs says how the bundle's run is not the run of a command with
// these verb, selection, options and parameters, "" when it is.
func (b *Bundle) differs(verb string, sel build.Selection, resume, force bool, locked *params.Locked) string {
	var why []string
	if b.Verb != verb {
		why = append(why, fmt.Sprintf("it runs %s, this command %s", b.Verb, verb))
	}
	set := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return slices.Compact(s) }
	if !slices.Equal(set(b.Selection.Components), set(sel.Components)) || b.Selection.WithDeps != sel.WithDeps ||
		b.Selection.Offset != sel.Offset || b.Selection.Limit != sel.Limit {
		why = append(why, fmt.Sprintf("it runs %s, this command %s", describeSelection(b.Selection), describeSelection(sel)))
	}
	if b.Resume != resume {
		why = append(why, fmt.Sprintf("its --resume is %t, this command's %t", b.Resume, resume))
	}
	if b.Force != force {
		why = append(why, fmt.Sprintf("its --force is %t, this command's %t", b.Force, force))
	}
	if names := paramsDiffer(b.Locked, locked); len(names) > 0 {
		why = append(why, fmt.Sprintf("its parameters differ from this command's: %s", strings.Join(names, ", ")))
	}
	return strings.Join(why, "; ")
}

// paramsDiffer names the parameters a run locked that a command locks to
// other values, or not at all (or the other way round): a command given
// other params files or -e values must not attach to the run and report
// its outcome as if its own values were deployed. Names only, never
// values (secrets). Not compared: what a run generates (the deployment
// id), what it is (the stack's name), and values taken from components'
// outputs, which the run itself changes while it goes on.
func paramsDiffer(run []*params.Value, locked *params.Locked) []string {
	compared := func(v *params.Value) bool {
		return v.Pending == "" && !strings.HasPrefix(v.Source, "output:") &&
			v.Name != params.DeploymentID && v.Name != params.StackName
	}
	var mine []*params.Value
	if locked != nil {
		mine = locked.Values()
	}
	theirs := map[string]*params.Value{}
	for _, v := range run {
		if compared(v) {
			theirs[v.QName()] = v
		}
	}
	var names []string
	for _, v := range mine {
		if !compared(v) {
			continue
		}
		q := v.QName()
		if t, ok := theirs[q]; !ok || t.Value != v.Value || t.Link != v.Link {
			names = append(names, v.Name)
		}
		delete(theirs, q)
	}
	for _, v := range theirs {
		names = append(names, v.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// describeSelection names a selection as its flags do.
func describeSelection(s build.Selection) string {
	if !s.Narrows() {
		return "every component"
	}
	var flags []string
	if len(s.Components) > 0 {
		flags = append(flags, "-c "+strings.Join(s.Components, ","))
	}
	if s.WithDeps {
		flags = append(flags, "-a")
	}
	if s.Offset != "" {
		flags = append(flags, "-o "+s.Offset)
	}
	if s.Limit != "" {
		flags = append(flags, "-l "+s.Limit)
	}
	return strings.Join(flags, " ")
}

func (b *Bundle) encode() ([]byte, error) {
	data, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode the run for the workers: %w", err)
	}
	return data, nil
}

// DecodeBundle reads a run's bundle.
func DecodeBundle(data []byte) (*Bundle, error) {
	var b Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("read the run's bundle: %w", err)
	}
	if b.Format != bundleFormat {
		return nil, fmt.Errorf("the run was started by a gantry whose bundles are version %d; this gantry reads version %d: run the same gantry on the client and the workers", b.Format, bundleFormat)
	}
	return &b, nil
}

func (b *Bundle) setLocked(l *params.Locked) {
	if l == nil {
		return
	}
	b.DeploymentID = l.DeploymentID
	b.Locked = l.Values()
}

func (b *Bundle) locked() *params.Locked {
	return params.Restore(b.Stack, b.DeploymentID, b.Locked)
}

// encodePlan is the plan as a run's folder keeps it.
func encodePlan(p *plan.Plan) ([]byte, error) {
	var buf bytes.Buffer
	if err := p.EncodeJSON(&buf, false); err != nil {
		return nil, fmt.Errorf("encode the plan: %w", err)
	}
	return buf.Bytes(), nil
}

// Fingerprint is what names a run as built from a checkout: the plan with
// paths relative to the checkout's root, the digest of every component's
// folder and of every file of the stack. Two builds of a run from the same
// checkout, options, parameters and state have the same.
type Fingerprint struct {
	Sum   string   `json:"sum"`
	Plan  []byte   `json:"plan"`
	Dirs  []string `json:"dirs"`
	Files []string `json:"files"`
	// digests are the component folders' digests, by component.DirKey,
	// for the run's fingerprints of its components.
	digests map[string]*component.DirDigest
	sum     string
}

// rootMark stands for the checkout's root in the paths a fingerprint holds.
const rootMark = "$ROOT"

// fingerprintOf fingerprints a built run.
func fingerprintOf(root string, st *Stack, b *built) (*Fingerprint, error) {
	rel := func(s string) string {
		if root == "" || root == string(filepath.Separator) {
			return s
		}
		return strings.ReplaceAll(s, root, rootMark)
	}
	fp := &Fingerprint{digests: map[string]*component.DirDigest{}}
	pj, err := encodePlan(b.plan)
	if err != nil {
		return nil, err
	}
	fp.Plan = []byte(rel(string(pj)))
	names := make([]string, 0, len(b.plan.Components))
	for name := range b.plan.Components {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		info := b.plan.Components[name]
		if info.Dir == "" {
			continue
		}
		key := component.DirKey(info.Dir, info.FingerprintExclude, info.FingerprintReads)
		if fp.digests[key] != nil {
			continue
		}
		d := b.facts.DirSums[key]
		if d == nil {
			if d, err = component.DigestDir(info.Dir, info.FingerprintExclude, info.FingerprintReads); err != nil {
				// A folder that cannot be read: its error is the digest,
				// and the step that needs it says what is wrong.
				d = &component.DirDigest{Sum: "unreadable: " + err.Error()}
			}
		}
		fp.digests[key] = d
		fp.Dirs = append(fp.Dirs, rel(strings.ReplaceAll(key, "\x00", " ")+" "+d.Sum))
	}
	sort.Strings(fp.Dirs)
	for _, f := range st.Res.Files {
		sum := "missing"
		if data, err := os.ReadFile(f); err == nil {
			h := sha256.Sum256(data)
			sum = hex.EncodeToString(h[:])
		}
		fp.Files = append(fp.Files, rel(absPath(f))+" "+sum)
	}
	sort.Strings(fp.Files)
	h := sha256.New()
	h.Write(fp.Plan)
	for _, l := range append(append([]string{}, fp.Dirs...), fp.Files...) {
		h.Write([]byte("\n" + l))
	}
	fp.sum = hex.EncodeToString(h.Sum(nil))
	fp.Sum = fp.sum
	return fp, nil
}

// differs says how a worker's build of a run differs from the client's:
// the first file, component folder or step that is not the same.
func (fp *Fingerprint) differs(client *Fingerprint) string {
	if d := firstDiff(client.Files, fp.Files); d != "" {
		return "the stack's files differ: " + d
	}
	if d := firstDiff(client.Dirs, fp.Dirs); d != "" {
		return "a component's folder differs: " + d
	}
	var a, b struct {
		Nodes      []json.RawMessage          `json:"nodes"`
		Edges      []json.RawMessage          `json:"edges"`
		Components map[string]planComponentOf `json:"components"`
	}
	_ = json.Unmarshal(client.Plan, &a)
	_ = json.Unmarshal(fp.Plan, &b)
	// What is done with a component differing says why, where its steps
	// differing (a deploy's steps for a skip's) would not.
	if d := componentDiffers(a.Components, b.Components); d != "" {
		return d
	}
	for i := 0; i < min(len(a.Nodes), len(b.Nodes)); i++ {
		if !bytes.Equal(a.Nodes[i], b.Nodes[i]) {
			return stepDiffers(i, a.Nodes[i], b.Nodes[i])
		}
	}
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Sprintf("the client's plan has %d steps, this worker's %d", len(a.Nodes), len(b.Nodes))
	}
	return "the plans differ (their edges or components)"
}

// planComponentOf is what a plan says is done with a component and why.
type planComponentOf struct {
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// componentDiffers names the first component (by name) the client's plan
// and the worker's do different things with, each with its reason (which
// names a changed parameter, such as a landscape's sow.inputs digest of
// what its files are evaluated with); "" when none does.
func componentDiffers(client, worker map[string]planComponentOf) string {
	names := make([]string, 0, len(client))
	for name, a := range client {
		if b, ok := worker[name]; ok && a.Action != b.Action {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	name := slices.Min(names)
	did := func(c planComponentOf, where string) string {
		if c.Reason == "" {
			return c.Action + " " + where
		}
		return c.Action + " " + where + " (" + c.Reason + ")"
	}
	return fmt.Sprintf("component %s: %s, %s", name, did(client[name], "on the client"), did(worker[name], "here"))
}

// stepDiffers says how step i of the client's plan, client, differs from
// the worker's: its label and each field that differs, with the client's
// value and this worker's, rather than two documents to compare by eye.
func stepDiffers(i int, client, worker json.RawMessage) string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(client, &a) != nil || json.Unmarshal(worker, &b) != nil {
		return fmt.Sprintf("step %d of the plan differs: the client's is %s, this worker's %s", i+1, clip(client), clip(worker))
	}
	name := fmt.Sprintf("step %d of the plan", i+1)
	if !bytes.Equal(a["id"], b["id"]) {
		// Other steps altogether: what each is says enough.
		return fmt.Sprintf("%s is %s on the client, %s here", name, stepName(a), stepName(b))
	}
	var label string
	if json.Unmarshal(a["label"], &label) == nil && label != "" {
		name += " (" + label + ")"
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var fields []string
	for _, k := range keys {
		if !bytes.Equal(a[k], b[k]) {
			fields = append(fields, fmt.Sprintf("its %s is %s on the client, %s here", k, fieldValue(a[k]), fieldValue(b[k])))
		}
	}
	return name + " differs: " + strings.Join(fields, "; ")
}

// stepName is a step's id and label, for a message.
func stepName(n map[string]json.RawMessage) string {
	var id, label string
	_ = json.Unmarshal(n["id"], &id)
	_ = json.Unmarshal(n["label"], &label)
	return fmt.Sprintf("%s (%s)", id, label)
}

// fieldValue is a step's field for a message: clipped, "none" when the
// step has none.
func fieldValue(v json.RawMessage) string {
	if v == nil {
		return "none"
	}
	if len(v) > 160 {
		return string(v[:160]) + "…"
	}
	return string(v)
}

func firstDiff(want, got []string) string {
	for i := 0; i < max(len(want), len(got)); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("%s is missing here", firstField(want[i]))
		case i >= len(want):
			return fmt.Sprintf("%s is not in the client's checkout", firstField(got[i]))
		case want[i] != got[i]:
			if firstField(want[i]) == firstField(got[i]) {
				return firstField(want[i]) + " is not the same"
			}
			return fmt.Sprintf("the client has %s where this worker has %s", firstField(want[i]), firstField(got[i]))
		}
	}
	return ""
}

// firstField is the path of a fingerprint's line, relative to the
// checkout.
func firstField(l string) string {
	if i := strings.LastIndexByte(l, ' '); i > 0 {
		l = l[:i]
	}
	return strings.TrimPrefix(l, rootMark+"/")
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
