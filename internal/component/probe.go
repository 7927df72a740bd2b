package component

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// Implementation kinds.
const (
	ImplMake       = "make"
	ImplScript     = "script"
	ImplTerraform  = "terraform"
	ImplHelm       = "helm"
	ImplKubernetes = "kubernetes"
	ImplBare       = "bare"
)

// Implementation is how a component carries out a verb.
type Implementation struct {
	Kind string
	// Args is the command for make and script implementations.
	Args []string
	// File is what was found (the Makefile, the script, a *.tf file...).
	File string
}

func (i *Implementation) String() string {
	switch i.Kind {
	case ImplMake, ImplScript:
		return strings.Join(i.Args, " ")
	}
	return i.Kind + " (" + filepath.Base(i.File) + ")"
}

// NoImplementationError says a component cannot carry out a verb.
type NoImplementationError struct {
	Dir, Verb string
	Hint      string
}

func (e *NoImplementationError) Error() string {
	msg := fmt.Sprintf("no implementation of %q in %s: expected a Makefile with the target %s:, or an executable %s, %s.sh, bin/%s or _%s",
		e.Verb, e.Dir, e.Verb, e.Verb, e.Verb, e.Verb, e.Verb)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Probe finds how the component in dir carries out verb (DESIGN 4.5): a
// Makefile with a <verb>: target runs make <verb>; an executable <verb>,
// bin/<verb> or _<verb>, each also with .sh, runs as it is; *.tf files mean
// terraform, Chart.yaml or values.yaml helm, kustomization.yaml kubernetes.
func Probe(dir, verb string) (*Implementation, error) {
	for _, mf := range []string{"GNUmakefile", "makefile", "Makefile"} {
		path := filepath.Join(dir, mf)
		if ok, err := hasMakeTarget(path, verb); err != nil {
			return nil, err
		} else if ok {
			return &Implementation{Kind: ImplMake, Args: []string{"make", "--no-print-directory", "-f", mf, verb}, File: path}, nil
		}
	}
	var notExecutable []string
	for _, base := range []string{verb, "bin/" + verb, "_" + verb} {
		for _, name := range []string{base, base + ".sh"} {
			path := filepath.Join(dir, name)
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if fi.Mode().Perm()&0o111 == 0 {
				notExecutable = append(notExecutable, name)
				continue
			}
			abs, err := filepath.Abs(path)
			if err != nil {
				abs = path
			}
			return &Implementation{Kind: ImplScript, Args: []string{abs}, File: path}, nil
		}
	}
	for _, probe := range []struct{ kind, glob string }{
		{ImplTerraform, "*.tf"},
		{ImplHelm, "Chart.yaml"},
		{ImplHelm, "values.yaml"},
		{ImplHelm, "values.yaml.template"},
		{ImplHelm, "values.yaml.gotemplate"},
		{ImplKubernetes, "kustomization.yaml"},
	} {
		if m, _ := filepath.Glob(filepath.Join(dir, probe.glob)); len(m) > 0 {
			return &Implementation{Kind: probe.kind, File: m[0]}, nil
		}
	}
	e := &NoImplementationError{Dir: dir, Verb: verb}
	// The folder may be gone (a component removed from the stack whose
	// folder was deleted too): none of what is expected can be there.
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		e.Hint = "the folder does not exist"
	}
	if len(notExecutable) > 0 {
		e.Hint = fmt.Sprintf("%s exists but is not executable (chmod +x %s)", notExecutable[0], filepath.Join(dir, notExecutable[0]))
	}
	return nil, e
}

// makeTargetRE matches a rule line naming targets: "deploy:", "a b: deps",
// "deploy::", but not variable assignments ("X := y", "X ::= y").
var makeTargetRE = regexp.MustCompile(`^([^\s:#=][^:#=]*?)\s*::?(?:[^=]|$)`)

func hasMakeTarget(path, target string) (bool, error) {
	// A Makefile that is a FIFO or a device must not hang the probe.
	data, err := inputfile.Read(path, inputfile.MaxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %s", path, inputfile.Problem(err))
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '\t' || line[0] == '#' {
			continue
		}
		m := makeTargetRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, t := range strings.Fields(m[1]) {
			if t == target {
				return true, nil
			}
		}
	}
	return false, sc.Err()
}
