package state

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// hubDoc is the part of a Hub CLI state a platform stack's overlay reads:
// the Hub's elaborate -s takes no more. Other fields are ignored, so that
// states of every Hub version are read.
type hubDoc struct {
	Version int    `yaml:"version"`
	Kind    string `yaml:"kind"`
	Status  string `yaml:"status"`
	Meta    struct {
		Name string `yaml:"name"`
	} `yaml:"meta"`
	Lifecycle struct {
		Order []string `yaml:"order"`
	} `yaml:"lifecycle"`
	StackParameters []hubValue               `yaml:"stackParameters"`
	StackOutputs    []hubValue               `yaml:"stackOutputs"`
	Provides        map[string][]string      `yaml:"provides"`
	Components      map[string]*hubComponent `yaml:"components"`
}

// hubValue is a Hub state's parameter or output: a parameter's Component
// qualifies its name, an output's Kind says whether it is a secret
// ("secret", "secret/password"...).
type hubValue struct {
	Component string `yaml:"component"`
	Name      string `yaml:"name"`
	Value     any    `yaml:"value"`
	Kind      string `yaml:"kind"`
}

// hubComponent is a Hub state's record of one component.
type hubComponent struct {
	Status          string     `yaml:"status"`
	CapturedOutputs []hubValue `yaml:"capturedOutputs"`
}

// isHubSecret reports whether a Hub output's kind marks it secret, as the
// Hub's own printing of outputs masks them.
func isHubSecret(kind string) bool { return strings.HasPrefix(kind, "secret") }

// DecodePlatform parses a platform stack's state, which is only read (by
// elaborate -s): gantry's own, or one the Hub CLI wrote, plain or
// gzip-compressed, for a platform still deployed with the Hub. A stack's
// own state is read with Decode, which refuses the Hub's: gantry does not
// take a Hub state over.
func (f Files) DecodePlatform(path string) (*State, error) {
	if f.Snapshot != nil && (inputfile.IsGzip(f.Snapshot) || hubKind.Match(f.Snapshot)) {
		return DecodeHub(path, f.Snapshot)
	}
	return f.Decode(path)
}

// DecodeHub reads a Hub CLI state, plain or gzip-compressed, into a State
// with what elaborate -s reads: the stack parameters (by qualified name),
// the stack outputs, the provides and each component's status and captured
// outputs, ordered by lifecycle.order. Outputs of a secret kind are named
// in SecretOutputs, so that their values stay masked. Values that are not
// strings are given as the Hub hands them to a component: JSON.
func DecodeHub(path string, data []byte) (*State, error) {
	what := "the Hub CLI state"
	if inputfile.IsGzip(data) {
		what = "the gzip-compressed Hub CLI state"
		var err error
		if data, err = gunzip(data); err != nil {
			return nil, fmt.Errorf("state %s: %s cannot be read: %w", path, what, err)
		}
	}
	var doc hubDoc
	if err := unmarshalYAML(data, &doc); err != nil {
		// The decoder's message quotes the lines around the fault, which
		// may hold a secret: its first line says what and where.
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return nil, fmt.Errorf("%s", strings.Replace(positioned(path, msg), "the state is not valid", what+" is not valid", 1))
	}
	if doc.Kind != "state" {
		return nil, fmt.Errorf("state %s: %s has kind %q: expected kind: state", path, what, doc.Kind)
	}
	s, err := doc.toState()
	if err != nil {
		return nil, fmt.Errorf("state %s: %s is not valid: %w", path, what, err)
	}
	return s, nil
}

// gunzip decompresses a gzip-compressed state, no larger than a state
// gantry reads.
func gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(r, inputfile.MaxState+1))
	if err != nil {
		return nil, err
	}
	if len(out) > inputfile.MaxState {
		return nil, fmt.Errorf("it is larger than %s decompressed", inputfile.Bytes(inputfile.MaxState))
	}
	return out, nil
}

// toState gives the Hub state's values the shape of gantry's.
func (d *hubDoc) toState() (*State, error) {
	s := New(d.Meta.Name)
	s.Status = hubStatus(d.Status)
	for i, p := range d.StackParameters {
		if p.Name == "" {
			return nil, fmt.Errorf("stackParameters entry %d has no name", i+1)
		}
		if s.Parameters == nil {
			s.Parameters = map[string]string{}
		}
		q := p.Name
		if p.Component != "" {
			q += "|" + p.Component
		}
		s.Parameters[q] = hubString(p.Value)
	}
	// An output marked secret where a component captured it stays secret
	// as a stack output that does not repeat the mark.
	secretCaptured := map[string]bool{}
	for name, c := range d.Components {
		if c == nil {
			return nil, fmt.Errorf("component %s has an empty record", name)
		}
		for _, o := range c.CapturedOutputs {
			if isHubSecret(o.Kind) {
				secretCaptured[name+":"+o.Name] = true
			}
		}
	}
	for i, o := range d.StackOutputs {
		if o.Name == "" {
			return nil, fmt.Errorf("stackOutputs entry %d has no name", i+1)
		}
		if s.Outputs == nil {
			s.Outputs = map[string]string{}
		}
		// Of two outputs of one name the last is kept, as the Hub does.
		s.Outputs[o.Name] = hubString(o.Value)
		if isHubSecret(o.Kind) || secretCaptured[o.Name] {
			s.SecretOutputs = append(s.SecretOutputs, o.Name)
		}
	}
	for c, comps := range d.Provides {
		if s.Provides == nil {
			s.Provides = map[string][]string{}
		}
		s.Provides[c] = append([]string(nil), comps...)
	}
	for i, name := range hubOrder(d) {
		c := d.Components[name]
		rec := s.Component(name)
		rec.Order = i + 1
		if c == nil {
			// In lifecycle.order, never deployed.
			continue
		}
		rec.Status = hubStatus(c.Status)
		for _, o := range c.CapturedOutputs {
			if rec.Outputs == nil {
				rec.Outputs = map[string]string{}
			}
			rec.Outputs[o.Name] = hubString(o.Value)
			if isHubSecret(o.Kind) {
				rec.SecretOutputs = append(rec.SecretOutputs, o.Name)
			}
		}
	}
	return s, nil
}

// hubOrder is the deploy order of a Hub state's components: its
// lifecycle.order, then the components it does not name, by name.
func hubOrder(d *hubDoc) []string {
	order := make([]string, 0, len(d.Lifecycle.Order)+len(d.Components))
	seen := map[string]bool{}
	for _, name := range d.Lifecycle.Order {
		if name != "" && !seen[name] {
			seen[name] = true
			order = append(order, name)
		}
	}
	var rest []string
	for name := range d.Components {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	return append(order, rest...)
}

// hubStatus is the gantry status of a Hub status: a run the Hub left in
// progress (deploying, undeploying) or any other it has is incomplete.
func hubStatus(status string) string {
	switch status {
	case "", StatusDeployed, StatusUndeployed, StatusFailed, StatusIncomplete:
		return status
	case "error":
		return StatusFailed
	}
	return StatusIncomplete
}

// hubString is a Hub state's value as the Hub gives it to a component in
// its environment (util.MaybeJson): a string as it is, anything else
// (numbers, booleans, lists, maps) as JSON, where the Hub gives a map as
// "(error)"; no value is empty.
func hubString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
