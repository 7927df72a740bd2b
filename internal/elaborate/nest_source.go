package elaborate

import (
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// ResourceParameterPrefix begins the name of the parameter that holds a
// registered resource's value in the solution: ${config.resource.cert.value}
// in a leaf's parameter becomes a reference to it, so that the lock resolves
// it, and marks secret (and so masks) whatever reads a secret resource.
const ResourceParameterPrefix = "hub.resource."

// spreadRead is what one parameter definition read from config, for gantry
// params to say which level's value or default won.
type spreadRead struct {
	def   string      // file:line of the definition, as the lock's source says it
	value []configRef // what its value read
	dflt  []configRef // what its default read
}

// text says where the config a value read came from: the level whose value
// or default won, for a value that is one reference, else the definition
// with each field's level.
func (r *spreadRead) text(refs []configRef) string {
	if len(refs) == 0 {
		return ""
	}
	if len(refs) == 1 && refs[0].whole {
		return refs[0].value.origin()
	}
	var parts []string
	seen := map[string]bool{}
	for _, c := range refs {
		if !seen[c.name] {
			seen[c.name] = true
			parts = append(parts, strings.TrimPrefix(c.name, "config.")+" from "+c.value.origin())
		}
	}
	return r.def + " with " + strings.Join(parts, ", ")
}

// origin is where a config value came from: "hub.yaml:12 (default of shop)".
func (v configValue) origin() string {
	if v.pos.File == "" {
		return v.from
	}
	return fmt.Sprintf("%s (%s)", v.pos.FileLine(), v.from)
}

// record keeps what the parameter qname (name|leaf) read from config.
func (n *nester) record(qname string, read *spreadRead) {
	if read == nil {
		return
	}
	if n.spread == nil {
		n.spread = map[string][]*spreadRead{}
	}
	n.spread[qname] = append(n.spread[qname], read)
}

// SpreadSource says, for a parameter of a nested stack's leaf (qname is
// name|leaf) whose value the lock took from source, which level's config
// value or default won: "hub.yaml:12 (default of shop)", or, for a value
// reading several fields, the definition with each one's level. ok is false
// when the value did not come from config (a params file, the environment
// and the state keep their own sources).
func (r *Result) SpreadSource(qname, source string) (string, bool) {
	for _, read := range r.spread[qname] {
		var text string
		switch source {
		case read.def:
			text = read.text(read.value)
		case params.SourceDefault:
			text = read.text(read.dflt)
		}
		if text != "" {
			return text, true
		}
	}
	return "", false
}

// SecretResources are the values of the resources the params files register
// as secret (manifest.Resource.IsSecret), for the run's masker: whatever
// shows them is masked, referenced or not.
func (r *Result) SecretResources() []string { return r.secretResources }

// resourceValue turns ${config.resource.FIELD.value} into a reference to the
// parameter holding the registered resource's value, adding that parameter
// to the solution. ok is false when part reads something else.
func (n *nester) resourceValue(cfg *levelConfig, part params.Part) (ref string, from configValue, ok bool, err error) {
	field, isValue := strings.CutSuffix(part.Name, resourceValueSuffix)
	if !isValue || !strings.HasPrefix(field, "config.resource.") {
		return "", configValue{}, false, nil
	}
	_, given := cfg.values[field]
	if !given {
		return "", configValue{}, false, nil // Lookup says why
	}
	r, registered := cfg.resources[field]
	switch {
	case !registered:
		return "", configValue{}, true, errReported // checkResource said it
	case r.Value == "":
		return "", configValue{}, true, fmt.Errorf("resource %q is registered without a value (%s)", r.Name, r.Pos.FileLine())
	}
	param := ResourceParameterPrefix + r.Name
	if !n.resourceParams[param] {
		if n.resourceParams == nil {
			n.resourceParams = map[string]bool{}
		}
		n.resourceParams[param] = true
		isSecret := r.IsSecret()
		n.params = append(n.params, manifest.Parameter{Pos: r.Pos, Origin: r.Pos, Name: param, Kind: manifest.KindTech,
			Value: manifest.Scalar(escape(r.Value)), Secret: &isSecret, Brief: "the value of the " + r.Type + " resource " + r.Name})
	}
	ref = "${" + param
	for _, e := range part.Encodings {
		ref += "/" + e
	}
	return ref + "}", configValue{pos: r.Pos, from: "registered resource " + r.Name}, true, nil
}
