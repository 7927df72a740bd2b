package component

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/internal/inputfile"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// ResolveOutputs computes a component's outputs after its verb succeeded
// (DESIGN 4.5). A declared output takes, in order: fromTfVar key[/base64][/json]
// (a raw value file://path is read from the file, a relative path from the
// component's folder dir); else, with fromObject, what
// the kubernetes or helm plugin read from the cluster; else its value expanded over
// the raw outputs and the component's parameters; else the raw output of the
// same name; else the component parameter of that name. Raw outputs that are
// not declared are kept too. Secret are the outputs declared secret, those
// whose name looks secret, and those whose value reads a secret (a secret
// parameter, a secret output) whatever they declare.
//
// rawSecret are the raw outputs the implementation reported secret.
func ResolveOutputs(c *manifest.Component, dir string, raw map[string]string, rawSecret []string, exp *params.Expanded) (map[string]string, []string, error) {
	out := make(map[string]string, len(raw)+len(c.Outputs))
	for k, v := range raw {
		out[k] = v
	}
	// Outputs see the raw outputs, the declared outputs above them, then the
	// component's parameters.
	resolved := map[string]string{}
	var errs []error
	var secret []string
	isSecret := map[string]bool{} // a component may print a million outputs
	addSecret := func(k string) {
		if !isSecret[k] {
			isSecret[k] = true
			secret = append(secret, k)
		}
	}
	rawSecretSet := make(map[string]bool, len(rawSecret))
	for _, k := range rawSecret {
		rawSecretSet[k] = true
	}
	secretKey := func(k string) bool { return isSecret[k] || manifest.LooksSecret(k) || rawSecretSet[k] }
	for _, o := range c.Outputs {
		// A value that reads a secret — a parameter, an output of this
		// component or another — is secret whatever the output says.
		scope, _ := exp.SecretTracking() // a flag of its own, read by r.SecretRead
		r := &rawResolver{raw: raw, resolved: resolved, next: scope, isSecret: secretKey}
		v, err := resolveOutput(o, dir, raw, r, exp)
		if err != nil {
			errs = append(errs, fmt.Errorf("output %s: %w", o.Name, err))
			continue
		}
		out[o.Name] = v
		resolved[o.Name] = v
		// exp.IsSecret covers names that look secret and parameters holding
		// secrets; an output read from a raw output the implementation
		// reported secret (HUB_RANDOM's secrets) is secret whatever its name.
		if o.IsSecret() || r.SecretRead() || exp.IsSecret(o.Name) || RawKey(o) != "" && rawSecretSet[RawKey(o)] {
			addSecret(o.Name)
			// The raw output a secret comes from is just as secret.
			if raw := RawKey(o); raw != "" && raw != o.Name {
				addSecret(raw)
			}
		}
	}
	for k := range raw {
		if manifest.LooksSecret(k) || rawSecretSet[k] {
			addSecret(k)
		}
	}
	// An output whose value reads a secret output is secret too, however
	// it transforms it (#{...} may encode it past the masker). Values may
	// read values: repeat until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, o := range c.Outputs {
			if o.Value != "" && !isSecret[o.Name] && readsAny(o.Value, isSecret) {
				addSecret(o.Name)
				changed = true
			}
		}
	}
	sort.Strings(secret)
	if len(errs) == 0 {
		if err := textOnly(out); err != nil {
			errs = append(errs, err)
		}
	}
	return out, secret, errors.Join(errs...)
}

// textOnly refuses outputs that are not UTF-8 text: the state is YAML, which
// holds text only, and would give other bytes back to the runs after this
// one (a \xff written comes back as ÿ). Neither the value nor where in it
// the bad byte is is said: it may be a secret.
func textOnly(outputs map[string]string) error {
	var bad []string
	for k, v := range outputs {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			bad = append(bad, strconv.QuoteToASCII(k))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	what := "output"
	if len(bad) > 1 {
		what = "outputs"
	}
	return fmt.Errorf("%s %s: not UTF-8 text; gantry keeps outputs as text (the state, the components after this one): print a binary value base64-encoded", what, strings.Join(bad, ", "))
}

func resolveOutput(o manifest.Output, dir string, raw map[string]string, r params.Resolver, exp *params.Expanded) (string, error) {
	if o.FromTfVar != "" {
		parts := strings.Split(o.FromTfVar, "/")
		v, ok := raw[parts[0]]
		if !ok {
			return "", fmt.Errorf("fromTfVar: the implementation printed no output %q (outputs: %s)", parts[0], keysOf(raw))
		}
		if name, ok := strings.CutPrefix(v, fileRef); ok && name != "" {
			b, err := readFileRef(dir, name)
			if err != nil {
				return "", fmt.Errorf("fromTfVar %s: %w", o.FromTfVar, err)
			}
			v = b
		}
		for _, enc := range parts[1:] {
			switch enc {
			case "base64":
				b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
				if err != nil {
					return "", fmt.Errorf("fromTfVar %s: the value is not base64", o.FromTfVar)
				}
				v = string(b)
			case "json":
				var s string
				if json.Unmarshal([]byte(v), &s) == nil {
					v = s
					continue
				}
				var any any
				if err := json.Unmarshal([]byte(v), &any); err != nil {
					return "", fmt.Errorf("fromTfVar %s: the value is not JSON", o.FromTfVar)
				}
				b, _ := json.Marshal(any)
				v = string(b)
			default:
				return "", fmt.Errorf("fromTfVar %s: unknown decoding %q (expected base64 or json)", o.FromTfVar, enc)
			}
		}
		if !utf8.ValidString(v) {
			// The state is YAML, which holds text only. No value: it may
			// be a secret.
			return "", fmt.Errorf("fromTfVar %s: what it gives is not UTF-8 text, and gantry keeps outputs as text (the state, the components after this one): keep the value encoded (no /base64) and decode it where it is used", o.FromTfVar)
		}
		return v, nil
	}
	if ref := o.FromObject; ref != nil {
		// The plugin instance that read it reported it under the output's name.
		if v, ok := raw[o.Name]; ok {
			return v, nil
		}
		return "", fmt.Errorf("fromObject: %s/%s was not read from the cluster: the stage that reads outputs did not run, or failed", ref.Kind, ref.Name)
	}
	if o.Value != "" {
		return params.Expand(o.Value, r)
	}
	if v, ok := raw[o.Name]; ok {
		return v, nil
	}
	if v := exp.Get(o.Name); v != nil {
		return v.Value, nil
	}
	return "", fmt.Errorf("declared but not produced: the implementation printed no %q in an Outputs: block and the component has no parameter of that name (outputs printed: %s)", o.Name, keysOf(raw))
}

// fileRef starts a raw output that names the file holding the value.
const fileRef = "file://"

// readFileRef reads the value of a file:// raw output as the Hub CLI does:
// a relative path is the component folder's, where the implementation ran
// (never gantry's working folder, which would make the value depend on
// where gantry was started), and a value of one line loses its line end
// and surrounding spaces, as what a tool writes to a file ends with one.
// Several lines are kept as they are (a PEM, a kubeconfig).
func readFileRef(dir, name string) (string, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	b, err := inputfile.Read(name, inputfile.MaxValue)
	if err != nil {
		return "", err
	}
	v := string(b)
	if strings.Count(v, "\n") <= 1 {
		v = strings.Trim(v, " \r\n")
	}
	return v, nil
}

// readsAny reports whether a value's ${...} or #{...} reads one of the
// names (plain names: an output of the component itself).
func readsAny(value string, names map[string]bool) bool {
	t, err := params.Parse(value)
	if err != nil {
		return false
	}
	for _, p := range t.Parts {
		switch p.Kind {
		case params.Ref:
			if p.Component == "" && names[p.Name] {
				return true
			}
		case params.Expr:
			for _, cands := range params.ExprNames(p.Text) {
				for _, n := range cands {
					if names[n] {
						return true
					}
				}
			}
		}
	}
	return false
}

func keysOf(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return strings.Join(k, ", ")
}

// rawResolver looks names up in raw outputs, then declared outputs resolved
// so far, then in the component's scope.
type rawResolver struct {
	raw      map[string]string
	resolved map[string]string
	next     params.Resolver
	// isSecret tells the secret raw and resolved outputs; read notes that
	// one was given out (SecretRead).
	isSecret func(string) bool
	read     bool
}

func (r *rawResolver) Lookup(name string) (string, error) {
	if v, ok := r.raw[name]; ok {
		r.read = r.read || r.isSecret(name)
		return v, nil
	}
	if v, ok := r.resolved[name]; ok {
		r.read = r.read || r.isSecret(name)
		return v, nil
	}
	return r.next.Lookup(name)
}

// SecretRead reports whether a secret output or parameter was given out:
// an expression that fails after it withholds its message.
func (r *rawResolver) SecretRead() bool { return r.read || params.ReadsSecret(r.next) }

func (r *rawResolver) Output(comp, name string) (string, error) { return r.next.Output(comp, name) }

// RawKey is the printed output a declared output reads with fromTfVar, "" when
// it has none.
func RawKey(o manifest.Output) string {
	if o.FromTfVar == "" {
		return ""
	}
	k, _, _ := strings.Cut(o.FromTfVar, "/")
	return k
}
