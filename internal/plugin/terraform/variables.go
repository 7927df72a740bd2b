package terraform

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// declaredVariables maps the variables the module declares, in its *.tf
// files (native syntax) and *.tf.json files, to the keyword of their type
// ("string", "number", "list", …; "" when the declaration has none). As
// terraform does, it ignores files whose names start with "." or "#" or
// end with "~" (editors' backups and locks), and reads override files
// (override.tf, *_override.tf and their .tf.json forms) after the others,
// an override's type replacing the declaration's only where it sets one.
// Errors name files and the folder by their path from base (the
// component's folder) when they are under it or near.
func declaredVariables(dir, base string) (map[string]string, error) {
	primary, overrides, err := moduleFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(primary)+len(overrides) == 0 {
		where := shown(base, dir)
		if where == "." {
			where = "the component's folder"
		}
		return nil, fmt.Errorf("no *.tf or *.tf.json files in %s", where)
	}
	out := map[string]string{}
	for _, f := range primary {
		vars, err := fileVariables(f, base)
		if err != nil {
			return nil, err
		}
		for name, typ := range vars {
			out[name] = typ
		}
	}
	for _, f := range overrides {
		vars, err := fileVariables(f, base)
		if err != nil {
			return nil, err
		}
		for name, typ := range vars {
			if _, declared := out[name]; !declared || typ != "" {
				out[name] = typ
			}
		}
	}
	return out, nil
}

// moduleFiles are the files of the module in dir that terraform reads, the
// override files apart: *.tf and *.tf.json, but for names starting with "."
// or "#" or ending with "~" (editors' backups and locks).
func moduleFiles(dir string) (primary, overrides []string, err error) {
	native, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, nil, err
	}
	jsonFiles, err := filepath.Glob(filepath.Join(dir, "*.tf.json"))
	if err != nil {
		return nil, nil, err
	}
	for _, f := range append(native, jsonFiles...) {
		base := filepath.Base(f)
		switch stem := strings.TrimSuffix(strings.TrimSuffix(base, ".json"), ".tf"); {
		case strings.HasPrefix(base, ".") || strings.HasPrefix(base, "#") || strings.HasSuffix(base, "~"):
		case stem == "override" || strings.HasSuffix(stem, "_override"):
			overrides = append(overrides, f)
		default:
			primary = append(primary, f)
		}
	}
	return primary, overrides, nil
}

// fileVariables reads the variables of one file, native or JSON.
func fileVariables(path, base string) (map[string]string, error) {
	data, err := inputfile.Read(path, inputfile.MaxManifest)
	if err != nil {
		return nil, err
	}
	// terraform reads a file that starts with a byte order mark.
	text := strings.TrimPrefix(string(data), "\ufeff")
	var vars map[string]string
	if strings.HasSuffix(path, ".json") {
		vars, err = jsonVariables([]byte(text))
	} else {
		vars, err = nativeVariables(text)
	}
	var syntax *syntaxError
	switch {
	case errors.As(err, &syntax):
		return nil, fmt.Errorf("%s:%w", shown(base, path), err) // file:line:col: what
	case err != nil:
		return nil, fmt.Errorf("%s: %w", shown(base, path), err)
	}
	return vars, nil
}

// shown is path as messages name it: from base when that is shorter.
func shown(base, path string) string {
	if rel, err := filepath.Rel(base, path); err == nil && len(rel) < len(path) {
		return rel
	}
	return path
}

// nativeVariables reads the variable blocks of a file in terraform's native
// syntax: `variable "name" {` or `variable name {` at the top level, and the
// `type` attribute of each. Strings, heredocs and comments are skipped as
// terraform reads them, so that a brace in a description or a commented-out
// block changes nothing. terraform itself reports a file it cannot parse,
// when it runs; what cannot be read here is an error too.
func nativeVariables(text string) (map[string]string, error) {
	toks, err := tokenize(text)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, b := range topBlocks(toks, "variable") {
		// The first word of its type: "list" of list(string).
		typ := ""
		if v := b.attribute(toks, "type"); v.kind == tokIdent {
			typ = v.text
		}
		out[b.label] = typ
	}
	return out, nil
}

// jsonVariables reads the variables of a file in terraform's JSON syntax:
// {"variable": {"name": {"type": "list(string)"}}}, the block also as a list
// of such objects.
func jsonVariables(data []byte) (map[string]string, error) {
	var file map[string]json.RawMessage
	if err := json.Unmarshal(data, &file); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			// The offset is just past the character in question.
			return nil, (&scanner{text: string(data)}).errAt(max(int(syntax.Offset)-1, 0), "not terraform JSON: "+err.Error())
		}
		return nil, fmt.Errorf("not terraform JSON: %w", err)
	}
	raw, ok := file["variable"]
	if !ok {
		return nil, nil
	}
	var blocks []map[string]json.RawMessage
	var one map[string]json.RawMessage
	if err := json.Unmarshal(raw, &one); err == nil {
		blocks = append(blocks, one)
	} else if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, errors.New(`"variable": expected an object of variables, or a list of them`)
	}
	out := map[string]string{}
	for _, b := range blocks {
		for name, body := range b {
			var decl struct {
				Type json.RawMessage `json:"type"`
			}
			// A variable given as a list of bodies ([{"type": …}]) or an
			// empty one: no type said.
			_ = json.Unmarshal(body, &decl)
			var typ string
			_ = json.Unmarshal(decl.Type, &typ)
			out[name] = typeKeyword(typ)
		}
	}
	return out, nil
}

// typeKeyword is the first word of a type expression: "list" of
// "list(string)".
func typeKeyword(expr string) string {
	expr = strings.TrimSpace(expr)
	end := 0
	for end < len(expr) && isIdentByte(expr[end], end > 0) {
		end++
	}
	return expr[:end]
}
