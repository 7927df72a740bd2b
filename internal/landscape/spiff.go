package landscape

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/mandelsoft/spiff/dynaml"
	"github.com/mandelsoft/spiff/features"
	"github.com/mandelsoft/spiff/flow"
	"github.com/mandelsoft/spiff/spiffing"
	"github.com/mandelsoft/spiff/yaml"
	"github.com/mandelsoft/vfs/pkg/osfs"
	"github.com/mandelsoft/vfs/pkg/readonlyfs"
)

// Doc is a YAML (or JSON) document given to spiff: Name is its file (spiff's
// __ctx.DIR and messages use it), Data its text.
type Doc struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// Job is one spiff evaluation: the template processed with the stubs, in
// spiff's order (the first stub wins), and the last state appended as the
// last stub, as `spiff merge --state` does.
type Job struct {
	Template Doc   `json:"template"`
	Stubs    []Doc `json:"stubs,omitempty"`
	// State is the last state (&state nodes), nil for none; WantState asks
	// for the new state of the result.
	State     *Doc `json:"state,omitempty"`
	WantState bool `json:"wantState,omitempty"`
	// Partial evaluates as far as the stubs allow: what cannot be
	// evaluated is kept as Unresolved in the result and its issues are
	// returned beside it (a plan reads the shape of a deployment manifest
	// before the exports it imports exist).
	Partial bool `json:"partial,omitempty"`
	// WantYAML asks for the document as spiff writes it (the generated
	// files sow leaves in gen/ and export/, read again by spiff).
	WantYAML bool `json:"wantYAML,omitempty"`
	// ParseOnly reads the documents and no more: a check, before the run,
	// of a file that is evaluated only late in it (export.yaml).
	ParseOnly bool `json:"parseOnly,omitempty"`
	// Reading evaluates a file gantry reads the landscape with (acre.yaml,
	// component.yaml, template.yaml): every command reads them, validate
	// and plan included, and invalid input too, so spiff may read files
	// but runs no command (exec, pipe) and writes nothing (write, mkdir,
	// tempfile).
	Reading bool `json:"reading,omitempty"`
}

// Unresolved stands in a partial result for a value spiff could not
// evaluate: a string no evaluated document can hold.
const Unresolved = "\x00(( unresolved ))"

// Result is what a Job produced: the document as JSON, its new state as
// YAML (when asked for and there is one), or the problems.
type Result struct {
	JSON   json.RawMessage `json:"json,omitempty"`
	YAML   []byte          `json:"yaml,omitempty"`
	State  []byte          `json:"state,omitempty"`
	Issues []Issue         `json:"issues,omitempty"`
}

// Issue is one problem spiff found: the file and the node path where it
// gives them, and the message.
type Issue struct {
	File string   `json:"file,omitempty"`
	Path []string `json:"path,omitempty"`
	// Line and Col are where a YAML parser stopped (1-based), 0 unknown.
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
	Msg  string `json:"msg"`
	// Cause says the node itself is wrong (a reference to nothing, a
	// failed function), not only waiting for another node that is.
	Cause bool `json:"cause,omitempty"`
}

// noOSOperations is what spiff says of exec, pipe and tempfile when it runs
// without OS access.
const noOSOperations = "no OS operations supported in this execution environment"

// osRefused reports whether spiff's message is its refusal of a command
// (exec, pipe, tempfile) or of a write, in an evaluation without OS access.
func osRefused(msg string) bool {
	return strings.Contains(msg, noOSOperations) || strings.Contains(msg, "not writable") || strings.Contains(msg, "read-only file system")
}

// readingRefuses explains an OS operation refused in a file gantry reads
// the landscape with (Job.Reading).
const readingRefuses = "gantry evaluates acre.yaml, component.yaml and template.yaml whenever it reads the landscape, validate and plan included, and runs no command and writes no file then (exec, pipe, write, tempfile): do it in deployment.yaml, which runs with the component"

// evaluate runs a job with spiff in this process. spiff's panics (a nil
// state node panics, among others) become issues: a template must never
// crash gantry.
func evaluate(j Job) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{Issues: []Issue{{File: j.Template.Name, Msg: fmt.Sprintf("spiff failed on this input (a bug in spiff: %v)", r)}}}
		}
	}()
	// sow runs spiff with string interpolation on (SPIFF_FEATURES).
	s := spiffing.New().WithFeatures(features.INTERPOLATION)
	if j.Reading {
		// spiff turns its OS access off on any file system but the plain one.
		s = s.WithFileSystem(readonlyfs.New(osfs.New())).WithMode(spiffing.MODE_FILE_ACCESS)
	}
	tmpl, err := s.Unmarshal(j.Template.Name, j.Template.Data)
	if err != nil {
		return Result{Issues: []Issue{notYAML(j.Template.Name, err)}}
	}
	var stubs, states []spiffing.Node
	for _, d := range j.Stubs {
		n, err := s.Unmarshal(d.Name, d.Data)
		if err != nil {
			return Result{Issues: []Issue{notYAML(d.Name, err)}}
		}
		stubs = append(stubs, n)
	}
	if j.State != nil && len(strings.TrimSpace(string(j.State.Data))) > 0 {
		n, err := s.Unmarshal(j.State.Name, j.State.Data)
		if err != nil {
			return Result{Issues: []Issue{notYAML(j.State.Name, err)}}
		}
		if n != nil && n.Value() != nil {
			states = append(states, n)
		}
	}
	if j.ParseOnly {
		return Result{}
	}
	if j.Partial {
		return partial(s, tmpl, j, append(stubs, states...))
	}
	out, err := s.Cascade(tmpl, stubs, states...)
	if err != nil {
		issues := issuesOf(j.Template.Name, err)
		if j.Reading {
			for i := range issues {
				if osRefused(issues[i].Msg) {
					issues[i].Msg += "; " + readingRefuses
				}
			}
		}
		return Result{Issues: issues}
	}
	if j.WantState {
		if st := s.DetermineState(out); st != nil && st.Value() != nil {
			if res.State, err = s.Marshal(st); err != nil {
				return Result{Issues: []Issue{{File: j.Template.Name, Msg: "encode the state: " + err.Error()}}}
			}
		}
	}
	if j.WantYAML {
		if res.YAML, err = s.Marshal(out); err != nil {
			return Result{Issues: []Issue{{File: j.Template.Name, Msg: "encode the result: " + err.Error()}}}
		}
	}
	v, err := s.Normalize(out)
	if err != nil {
		return Result{Issues: []Issue{{File: j.Template.Name, Msg: "the result cannot be represented: " + err.Error()}}}
	}
	if res.JSON, err = json.Marshal(v); err != nil {
		return Result{Issues: []Issue{{File: j.Template.Name, Msg: "the result cannot be represented as JSON: " + err.Error()}}}
	}
	return res
}

// issuesOf turns spiff's error into issues, one per unresolved node with
// its file and path where spiff names them.
func issuesOf(template string, err error) []Issue {
	var un dynaml.UnresolvedNodes
	if errors.As(err, &un) && len(un.Nodes) > 0 {
		out := make([]Issue, 0, len(un.Nodes))
		for _, n := range un.Nodes {
			msg := n.Issue().Issue
			if msg == "" {
				if e, ok := n.Value().(dynaml.Expression); ok {
					msg = fmt.Sprintf("(( %s )) could not be evaluated", e)
				} else {
					msg = "could not be evaluated"
				}
			} else if e, ok := n.Value().(dynaml.Expression); ok {
				msg = fmt.Sprintf("(( %s )): %s", e, msg)
			}
			for _, sub := range n.Issue().Nested {
				msg += "; " + sub.Issue
			}
			file := n.SourceName()
			if file == "" {
				file = template
			}
			path := n.Path
			if len(path) == 0 {
				path = n.Context
			}
			out = append(out, Issue{File: file, Path: append([]string(nil), path...), Msg: msg, Cause: n.HasError()})
		}
		return out
	}
	return []Issue{{File: template, Msg: strings.TrimSpace(err.Error())}}
}

// partial evaluates a job as far as it goes: stubs that cannot be
// evaluated whole are kept as they are, and the result holds Unresolved
// where a value could not be evaluated.
//
// A partial evaluation is how plan and validate read a landscape: it may
// read files, but it runs no command (exec, pipe) and writes nothing
// (write, mkdir, tempfile) — what it cannot do stays unresolved, as the
// run does it. spiff turns its OS access off on any file system but the
// plain one.
func partial(s spiffing.Spiff, tmpl spiffing.Node, j Job, stubs []spiffing.Node) Result {
	st := flow.NewState(features.EncryptionKey(), flow.MODE_FILE_ACCESS, readonlyfs.New(osfs.New())).
		SetRegistry(dynaml.DefaultRegistry()).SetFeatures(spiffFeatures())
	out, err := flow.Cascade(flow.NewEnvironment(nil, "context", st), tmpl, flow.Options{Partial: true}, stubs...)
	var res Result
	if err != nil {
		res.Issues = issuesOf(j.Template.Name, err)
	}
	if out == nil {
		if err == nil {
			res.Issues = []Issue{{File: j.Template.Name, Msg: "spiff returned no document", Cause: true}}
		}
		return res
	}
	data, jerr := json.Marshal(partialValue(out))
	if jerr != nil {
		res.Issues = append(res.Issues, Issue{File: j.Template.Name, Msg: "the result cannot be represented as JSON: " + jerr.Error(), Cause: true})
		return res
	}
	res.JSON = data
	return res
}

// spiffFeatures are the features of every evaluation: the environment's
// (SPIFF_FEATURES) and string interpolation, which sow turns on.
func spiffFeatures() features.FeatureFlags {
	f := features.Features()
	f.Set(features.INTERPOLATION, true)
	return f
}

// spiffFeatureList is SPIFF_FEATURES for processes that run spiff: the
// environment's features and interpolation.
func spiffFeatureList() string {
	out := []string{features.INTERPOLATION}
	for _, f := range strings.Split(os.Getenv("SPIFF_FEATURES"), ",") {
		if f = strings.TrimSpace(f); f != "" && f != features.INTERPOLATION {
			out = append(out, f)
		}
	}
	return strings.Join(out, ",")
}

// partialValue is a partly evaluated node as plain data: expressions, and
// the text of nodes spiff never reached (a list whose merge is pending),
// become Unresolved.
func partialValue(n yaml.Node) any {
	if n == nil {
		return nil
	}
	switch v := n.Value().(type) {
	case map[string]yaml.Node:
		m := make(map[string]any, len(v))
		for k, c := range v {
			m[k] = partialValue(c)
		}
		return m
	case []yaml.Node:
		l := make([]any, len(v))
		for i, c := range v {
			l[i] = partialValue(c)
		}
		return l
	case dynaml.Expression:
		return Unresolved
	case string:
		if t := strings.TrimSpace(v); strings.HasPrefix(t, "((") && strings.HasSuffix(t, "))") {
			return Unresolved
		}
		return v
	case []byte:
		return string(v)
	case int64, float64, bool, nil:
		return v
	}
	return Unresolved
}

// yamlAt finds where spiff's YAML parser says it stopped.
var yamlAt = regexp.MustCompile(`line (\d+), column (\d+)`)

// notYAML is the issue of a document spiff cannot parse, positioned where
// the parser says.
func notYAML(file string, err error) Issue {
	is := Issue{File: file, Msg: "not valid YAML: " + strings.TrimPrefix(strings.TrimPrefix(err.Error(), "yaml: "), "[] "), Cause: true}
	if m := yamlAt.FindStringSubmatch(err.Error()); m != nil {
		is.Line, _ = strconv.Atoi(m[1])
		is.Col, _ = strconv.Atoi(m[2])
	}
	return is
}
