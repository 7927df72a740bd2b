package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/secret"
)

// ParamsFile is the file of a run's folder that keeps its parameters.
const ParamsFile = "params.json"

// Param is a parameter as reports show it, its value already masked.
type Param struct {
	Name string `json:"name"`
	// Component qualifies a stack parameter (name|component).
	Component string `json:"component,omitempty"`
	Value     string `json:"value"`
	// Source says where the value came from: file:line, env:VAR,
	// file:PATH, default, prompt, state, output:COMPONENT.
	Source string `json:"source,omitempty"`
	Env    string `json:"env,omitempty"`
	Secret bool   `json:"secret,omitempty"`
}

// NewParam makes a parameter's entry: a secret value — marked secret, or
// whose name says it is one — becomes the mask; any other value goes
// through mask, which hides the secrets it holds.
func NewParam(name, qualifier, value, source, env string, isSecret bool, mask func(string) string) Param {
	p := Param{Name: name, Component: qualifier, Source: source, Env: env, Secret: isSecret || secret.Named(name)}
	switch {
	case p.Secret:
		p.Value = secret.Mask
	case mask != nil:
		p.Value = mask(value)
	default:
		p.Value = value
	}
	return p
}

// Params are the parameters of a run: the stack's, and each component's
// as it expanded them.
type Params struct {
	Stack      []Param            `json:"stack"`
	Components map[string][]Param `json:"components"`
}

// SaveParams writes a run's parameters into its folder.
func SaveParams(dir string, p *Params) error {
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode the run's parameters: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, ParamsFile), data, 0o600, false); err != nil {
		return fmt.Errorf("save the run's parameters: %w", err)
	}
	return nil
}

// readParams reads the parameters a run kept; nil when it kept none.
func readParams(dir string) (*Params, error) {
	data, err := os.ReadFile(filepath.Join(dir, ParamsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the run's parameters: %w", err)
	}
	var p Params
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("read the run's parameters %s: %w", filepath.Join(dir, ParamsFile), err)
	}
	// What was kept is masked; a file edited by hand is masked again.
	return p.masked(), nil
}

// masked is a copy of the parameters with every secret one masked — marked
// secret, or named like a secret — however they were made.
func (p *Params) masked() *Params {
	out := &Params{Stack: remaskAll(p.Stack)}
	if p.Components != nil {
		out.Components = make(map[string][]Param, len(p.Components))
		for name, ps := range p.Components {
			out.Components[name] = remaskAll(ps)
		}
	}
	return out
}

// remaskAll is remask of each parameter, in a list of its own (nil for nil).
func remaskAll(ps []Param) []Param {
	if ps == nil {
		return nil
	}
	out := make([]Param, len(ps))
	for i, p := range ps {
		out[i] = remask(p)
	}
	return out
}

func remask(p Param) Param {
	if p.Secret || secret.Named(p.Name) {
		p.Secret, p.Value = true, secret.Mask
	}
	return p
}
