// Package elaborate assembles a stack from its manifest, base stacks (fromStack),
// params files and component manifests into one elaborated manifest, by the rules
// of seed 000 "Elaborate".
package elaborate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// Options are the inputs of an elaboration besides the stack file.
type Options struct {
	// ParamsFiles are the stack's params files in command-line order.
	ParamsFiles []string
	// Env overrides the value of every parameter whose fromEnv is the key (-e K=V).
	Env map[string]string
	// Partial returns what could be assembled even when there are errors
	// (gantry validate goes on to the graph and the parameters, to report
	// every problem at once): the components whose manifests could not be
	// read are left out, and so are the references to them.
	Partial bool
}

// Result is an elaborated stack: the merged stack document and one component
// manifest per component, in the order of Stack.Components.
type Result struct {
	Stack      *manifest.Stack
	Components []*manifest.Component
	// Files are every file read, each once, for fingerprints and messages.
	Files []string
	// Dir is the folder of the stack manifest, where stack-level steps run;
	// an elaborated file written elsewhere records it.
	Dir string
	// SourceDirs are the folders of the stack and its base stacks (the
	// "installation sources"), the stack's first: where plugins/ and
	// templates/ are looked for.
	SourceDirs []string
	// ProductDirs are, by component, the folder of the stack that declares it
	// (where its SPEC-VERSION is).
	ProductDirs map[string]string
	// TemplateDirs are, by component, the folders of its template chain,
	// nearest first.
	TemplateDirs map[string][]string
	// DeployedVersions are, by component, the spec version its own records
	// say it was deployed with, where they live beside gantry's state (a
	// sow landscape's state/<component>/SPEC-VERSION); "" is never set.
	DeployedVersions map[string]string
	// OwnRecords says, for a stack whose components keep records of their
	// own beside gantry's state (a sow landscape's state/, gen/ and export/
	// folders, which a database state does not share), what those records
	// of a component are and whether none of them is there; nil for other
	// stacks. The resolve phase asks it of each component the state
	// records as deployed: a plan must not take such a component for
	// deployed, nor its delete for done, when its records are elsewhere.
	OwnRecords func(component string) (what string, none bool)
	// Records, for such a stack, are those records as the plan read them
	// (a sow landscape's), encoded: a worker rebuilding the plan of a run
	// under way plans from them (action.Source.Records), not from the
	// records the run has changed since. nil for other stacks.
	Records func() ([]byte, error)
	// Partial says some components' manifests had errors and were left out
	// (Options.Partial), and nothing else had any: the rest is a stack that
	// can be planned, except that the names and capabilities the left-out
	// manifests declare are unknown, so a reference that resolves to
	// nothing here may resolve in the whole stack.
	Partial bool
	// LeftOut are the components a partial result left out.
	LeftOut map[string]bool

	// spread and secretResources come from nested stacks (SpreadSource,
	// SecretResources).
	spread          map[string][]*spreadRead
	secretResources []string

	indexMu sync.Mutex
	index   map[string]*manifest.Component
	indexed int // len(Components) when index was built
}

// Annotations an elaborated file uses to keep what the stack manifests said
// about folders, since it may be read from elsewhere.
const (
	StackDirAnnotation     = "gantry.dev/stack-dir"
	SourceDirsAnnotation   = "gantry.dev/source-dirs"
	ProductDirAnnotation   = "gantry.dev/product-dir"
	TemplateDirsAnnotation = "gantry.dev/templates"
)

// WithStack returns a copy of r whose stack manifest is s (the components
// and folders are shared).
func (r *Result) WithStack(s *manifest.Stack) *Result {
	return &Result{Stack: s, Components: r.Components, Files: r.Files, Dir: r.Dir, SourceDirs: r.SourceDirs, ProductDirs: r.ProductDirs, TemplateDirs: r.TemplateDirs,
		DeployedVersions: r.DeployedVersions, OwnRecords: r.OwnRecords, spread: r.spread, secretResources: r.secretResources}
}

// Component returns the component named name, or nil.
func (r *Result) Component(name string) *manifest.Component {
	r.indexMu.Lock()
	defer r.indexMu.Unlock()
	// Components only grow while a Result is built; an index of another
	// length is stale.
	if r.index == nil || r.indexed != len(r.Components) {
		r.index = make(map[string]*manifest.Component, len(r.Components))
		for i := len(r.Components) - 1; i >= 0; i-- { // the first of a name wins
			if c := r.Components[i]; c != nil {
				r.index[c.Meta.Name] = c
			}
		}
		r.indexed = len(r.Components)
	}
	return r.index[name]
}

// level is one stack of a fromStack chain with what belongs to it.
type level struct {
	stack *manifest.Stack
	// paramsFiles are the params files a base stack's folder brought
	// (baseParamsFiles); the top stack's are in Options.
	paramsFiles []string
	params      [][]manifest.Parameter // params files, in order
	outputs     []manifest.Output      // the params files' stack outputs, in order
	// nest flattened the nested stacks of the top stack (nil without).
	nest *nester
}

// Elaborate assembles the stack at path. Every problem of every file is returned
// in the diagnostics; the result is nil when there are errors.
func Elaborate(path string, opts Options) (*Result, manifest.Diagnostics) {
	return elaborate(path, nil, opts)
}

// paramsProblems are the mistakes of the params files of a stack that could
// not be read: said with the stack's, so that one run tells of all of them.
func paramsProblems(opts Options) manifest.Diagnostics {
	var diags manifest.Diagnostics
	for _, pf := range opts.ParamsFiles {
		_, _, ds := manifest.LoadParams(pf)
		diags = append(diags, ds...)
	}
	return diags
}

// elaborate is Elaborate with the stack file's documents when they were
// parsed already (Load looks at them first).
func elaborate(path string, docs []*manifest.Node, opts Options) (*Result, manifest.Diagnostics) {
	var diags manifest.Diagnostics
	chain := loadChain(path, docs, &diags)
	if len(chain) == 0 {
		return nil, append(diags, paramsProblems(opts)...)
	}
	files := []string{}
	for _, l := range chain {
		files = append(files, l.stack.File)
		files = append(files, l.paramsFiles...)
	}
	own := chain[len(chain)-1]
	var pc manifest.ParamsConfig
	for _, pf := range opts.ParamsFiles {
		// Parse problems are said once, by LoadParams below.
		docs, ds := manifest.ParseFile(pf)
		if ds.HasErrors() {
			continue
		}
		c := manifest.DecodeParamsConfig(docs, &diags)
		pc.Config = append(pc.Config, c.Config...)
		pc.Resources = append(pc.Resources, c.Resources...)
	}
	if needsNesting(chain, pc) {
		// Nested stacks become leaves before assembly, so that everything
		// after elaborate sees one flat stack (the solution).
		own.nest = nest(chain, pc, &diags)
		own.params = append(own.params, own.nest.params)
		files = append(files, own.nest.files...)
	}
	for _, pf := range opts.ParamsFiles {
		ps, outs, ds := manifest.LoadParams(pf)
		diags = append(diags, ds...)
		own.params = append(own.params, ps)
		own.outputs = append(own.outputs, outs...)
		files = append(files, pf)
	}
	// Assemble even when a file had errors, so that the problems of component
	// manifests are reported together with those of the stack.
	res := assemble(chain, opts, &diags)
	if res != nil {
		// Components sharing a folder share its manifest: each file once.
		seen := make(map[string]bool, len(files))
		res.Files = files[:0]
		for _, f := range files {
			if !seen[f] {
				seen[f] = true
				res.Files = append(res.Files, f)
			}
		}
		for _, c := range res.Components {
			if !seen[c.File] {
				seen[c.File] = true
				res.Files = append(res.Files, c.File)
			}
		}
		res.Dir = filepath.Dir(path)
		if own.nest != nil {
			res.spread, res.secretResources = own.nest.spread, own.nest.secretResources
		}
	}
	if diags.HasErrors() && !opts.Partial {
		return nil, diags
	}
	return res, diags
}

// loadChain loads the stack and its base stacks, base-most first. A cycle of
// fromStack references is an error that prints the cycle. A base given as a
// directory brings the params files next to its hub.yaml (baseParamsFiles).
func loadChain(path string, docs []*manifest.Node, diags *manifest.Diagnostics) []*level {
	var chain []*level
	seen := map[string]int{}
	var names []string
	var from manifest.Pos
	var paramsFiles []string
	for path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if i, ok := seen[abs]; ok {
			cycle := append(append([]string{}, names[i:]...), names[i])
			diags.Errorf(from, "meta.fromStack", "fromStack cycle: %s", strings.Join(cycle, " → "))
			return nil
		}
		seen[abs] = len(names)
		names = append(names, path)
		var s *manifest.Stack
		var ds manifest.Diagnostics
		if docs != nil {
			s, ds = manifest.DecodeStackFile(path, docs, nil)
			docs = nil // base stacks are read from their files
		} else {
			s, ds = manifest.LoadStack(path)
		}
		*diags = append(*diags, ds...)
		if s == nil {
			if len(names) > 1 && len(ds) == 1 && ds[0].Pos.Line == 0 {
				// The base file itself is missing: say where it was named.
				(*diags)[len(*diags)-1] = manifest.Diagnostic{Pos: from, Field: "meta.fromStack", Msg: "base stack " + path + ": " + ds[0].Msg}
			}
			return nil
		}
		if len(names) == 1 && s.Meta.Pos.Line == 0 {
			// The stack deployed has a name; the state and hub.stackName
			// carry it. A base or a nested stack needs none.
			diags.Errorf(s.Pos, "", "missing required field %q: the stack deployed needs meta.name", "meta")
		}
		l := &level{stack: s, paramsFiles: paramsFiles}
		for _, pf := range paramsFiles {
			ps, outs, ds := manifest.LoadParams(pf)
			*diags = append(*diags, ds...)
			l.params = append(l.params, ps)
			l.outputs = append(l.outputs, outs...)
		}
		chain = append([]*level{l}, chain...)
		if s.Meta.FromStack == "" {
			break
		}
		from = s.Meta.Positions.At("fromStack", s.Meta.Pos)
		path, paramsFiles = resolveFromStack(s, diags)
	}
	return chain
}

// envVar names the environment a stack is deployed to (dev, prod): with it
// set, a base stack's folder brings params-$ENV.yaml too, as in the Hub CLI.
const envVar = "ENV"

// baseParamsFiles are the params files a base stack's folder dir brings, in
// the order they merge, as the Hub CLI reads them: params.yaml, then
// params-$ENV.yaml when ENV is set, each when it exists. The stack at the
// top of the chain has only the params files it is given.
func baseParamsFiles(dir string) []string {
	names := []string{"params.yaml"}
	if env := os.Getenv(envVar); env != "" {
		names = append(names, "params-"+env+".yaml")
	}
	var files []string
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			files = append(files, filepath.Join(dir, n))
		}
	}
	return files
}

// pathErrorReason is what went wrong with a path, without the path and
// the operation an fs.PathError repeats ("too many levels of symbolic
// links", "permission denied").
func pathErrorReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// resolveFromStack finds the base stack file of s: a directory means its
// hub.yaml and the params files there (baseParamsFiles), a file means that
// file alone.
func resolveFromStack(s *manifest.Stack, diags *manifest.Diagnostics) (stackFile string, paramsFiles []string) {
	ref := s.Meta.FromStack
	p := ref
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(s.File), ref)
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		diags.Errorf(s.Meta.Positions.At("fromStack", s.Meta.Pos), "meta.fromStack", "base stack %q not found (looked for %s)", ref, p)
		return "", nil
	case err != nil:
		// A loop of links, a folder that cannot be searched: say what.
		diags.Errorf(s.Meta.Positions.At("fromStack", s.Meta.Pos), "meta.fromStack", "base stack %q cannot be read: %s: %s", ref, p, pathErrorReason(err))
		return "", nil
	case fi.IsDir():
		stackFile = filepath.Join(p, "hub.yaml")
		if _, err := os.Stat(stackFile); err != nil {
			diags.Errorf(s.Meta.Positions.At("fromStack", s.Meta.Pos), "meta.fromStack", "base stack directory %q has no hub.yaml", ref)
			return "", nil
		}
		return stackFile, baseParamsFiles(p)
	}
	return p, nil
}
