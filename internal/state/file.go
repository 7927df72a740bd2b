package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/inputfile"
)

// ReadFile reads a state: its snapshot and the journal that continues it.
// A missing state gives (nil, nil).
func ReadFile(path string) (*State, error) {
	f, err := ReadFiles(path)
	if err != nil {
		return nil, err
	}
	return f.Decode(path)
}

// Decode parses a state document: as Encode writes it with decodeFast, and
// anything else (a hand edit) with goccy, whose messages point at the fault.
func Decode(path string, data []byte) (*State, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		// gantry writes a state whole or not at all: an empty one was
		// made or cut by something else (a full disk's copy, a hand).
		return nil, fmt.Errorf("state %s is empty: gantry never writes an empty state, so something else made or cut it; restore it from a copy, or move it aside to deploy from no state (every component runs again)", path)
	}
	s, err := decodeDoc(data)
	if err != nil {
		if err := hubState(path, data); err != nil {
			return nil, err
		}
		if probs := shapeProblems(data); agrees(probs, err.Error()) {
			return nil, shapeError(path, probs)
		}
		return nil, fmt.Errorf("%s", positioned(path, err.Error()))
	}
	s, err = checked(path, s)
	if bad := (*badNameError)(nil); errors.As(err, &bad) {
		return nil, fmt.Errorf("%sstate %s is not valid: %w", bad.at(path, data), path, bad)
	}
	return s, err
}

// hubKind is the line that says a YAML document is a Hub CLI state.
var hubKind = regexp.MustCompile(`(?m)^kind:[ \t]*["']?state["']?[ \t]*$`)

// hubState says what a state gantry cannot read is when it is the Hub CLI's
// (nil when it is not): hub writes its states gzip-compressed by default,
// plain YAML of kind: state with --compressed=false. Its many unknown
// fields, or "expected a mapping", would not tell the user that the file is
// another tool's, nor what to do.
func hubState(path string, data []byte) error {
	what := ""
	switch {
	case inputfile.IsGzip(data):
		what = "is gzip-compressed, as the Hub CLI writes its states"
	case hubKind.Match(data):
		what = "is a Hub CLI state (kind: state)"
	default:
		return nil
	}
	return fmt.Errorf("state %s %s: gantry does not deploy on a Hub CLI state nor take one over (it reads one only as the platform of `gantry elaborate -s PLATFORM.STATE`). Give gantry a state of its own with -s (-s gantry.state: its first deploy runs every component again) or move the file aside; the Hub's file is left as it is (docs/hub-compatibility.md)", path, what)
}

// decodeYAML parses a state document with goccy, the one parser of every
// document decodeFast does not take. Its times are read strictly
// (stateTimes) from the same syntax tree: goccy's own reading of a time
// field takes text that is no time for none, and a custom reading of one
// costs goccy a pass over the whole document (14 s for 1,000 components).
func decodeYAML(data []byte) (s *State, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("the YAML decoder could not read it (%v): look for a tag (!…), an anchor (&…) or an alias (*…), which gantry never writes", r)
		}
	}()
	if err := noAnchors(data); err != nil {
		return nil, err
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, err
	}
	s = &State{}
	docs := withoutDirectives(f.Docs)
	if len(docs) == 0 || docs[0].Body == nil {
		return s, nil
	}
	body := docs[0].Body
	times, err := stateTimes(body)
	if err != nil {
		return nil, err
	}
	if err := yaml.NodeToValue(body, s, yaml.DisallowUnknownField()); err != nil {
		return nil, err
	}
	times.apply(s)
	return s, nil
}

// withoutDirectives are a file's documents from its first that is not a
// directive, as Unmarshal takes them: a directive (%YAML 1.2, written by
// some YAML tools before ---) is a document of its own in goccy's tree.
func withoutDirectives(docs []*ast.DocumentNode) []*ast.DocumentNode {
	for len(docs) > 0 && docs[0].Body != nil && docs[0].Body.Type() == ast.DirectiveType {
		docs = docs[1:]
	}
	return docs
}

// timeError is a state's time that is none (strictTime).
type timeError struct{ text string }

func (e *timeError) Error() string { return "expected a time (2006-01-02T15:04:05Z)" }

// strictTime reads a time of the state (updated, started, finished) as
// gantry writes it, RFC 3339; goccy's own reading takes text that is no
// time for none ("started: yesterday" read as no time at all).
func strictTime(t *time.Time, text string) error {
	if text == "" || text == "null" || text == "~" {
		*t = time.Time{}
		return nil
	}
	// RFC 3339 (whose t and z may be lower case), and the other forms of
	// a YAML timestamp.
	text = strings.ToUpper(text)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999 Z07:00",
		"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if v, err := time.Parse(layout, text); err == nil {
			*t = v
			return nil
		}
	}
	if timestampShape.MatchString(text) {
		// A year Go does not parse (past 9999, before 0), which Encode
		// can write: read as goccy always read it.
		*t = time.Time{}
		return nil
	}
	return &timeError{text: text}
}

// timestampShape is a timestamp's text, its year aside.
var timestampShape = regexp.MustCompile(`^-?\d{4,}-\d\d-\d\d([Tt ]|$)`)

// unmarshalYAML decodes a state's YAML into v with goccy, turning its panics
// into errors: goccy fails on some hand edits, a tag on an anchored list
// (secretOutputs: &x !t) took it down with a nil dereference.
//
// A state holds no anchor nor alias (gantry never writes one, nor does the
// Hub CLI): one is refused before decoding, where it is, as the decoder
// would expand aliases without bound — a kilobyte of nested aliases took
// gigabytes.
func unmarshalYAML(data []byte, v any, opts ...yaml.DecodeOption) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML decoder could not read it (%v): look for a tag (!…), an anchor (&…) or an alias (*…), which gantry never writes", r)
		}
	}()
	if err := noAnchors(data); err != nil {
		return err
	}
	return yaml.UnmarshalWithOptions(data, v, opts...)
}

// noAnchors refuses a document with an anchor or an alias, saying the
// first's position as the decoder's messages do ("[line:col] …").
func noAnchors(data []byte) error {
	for _, t := range lexer.Tokenize(string(data)) {
		what := ""
		switch t.Type {
		case token.AnchorType:
			what = "an anchor (&…)"
		case token.AliasType:
			what = "an alias (*…)"
		default:
			continue
		}
		line, col := 0, 0
		if t.Position != nil {
			line, col = t.Position.Line, t.Position.Column
		}
		return fmt.Errorf("[%d:%d] %s: a state holds none (gantry never writes one), and aliases would be expanded without bound", line, col, what)
	}
	return nil
}

// checked refuses a decoded state of another format version or one a hand
// edit broke, and gives it its components' map.
func checked(path string, s *State) (*State, error) {
	if s.Version != FormatVersion {
		return nil, fmt.Errorf("state %s has format version %d; this gantry reads version %d", path, s.Version, FormatVersion)
	}
	if s.Components == nil {
		s.Components = map[string]*Component{}
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("state %s is not valid: %w", path, err)
	}
	return s, nil
}

// yamlPos is the "[line:col] " that starts the YAML parser's messages.
var yamlPos = regexp.MustCompile(`^\[(\d+):(\d+)\] `)

// positioned says that the state at path is not valid, where the YAML
// parser says, in the file:line:col form of every other message: editors
// and terminals jump to it.
func positioned(path, msg string) string {
	msg = withoutValues(inWords(dupKeyInWords(path, msg)))
	if m := yamlPos.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s:%s:%s: the state is not valid: %s", path, m[1], m[2], msg[len(m[0]):])
	}
	return fmt.Sprintf("state %s is not valid: %s", path, msg)
}

// dupKeyMessage is the YAML decoder's message of a key written twice in a
// mapping; the key is a name, not a value (withoutValues keeps it).
var dupKeyMessage = regexp.MustCompile(`mapping key "((?:[^"\\]|\\.)*)" already defined at \[(\d+):(\d+)\]`)

// dupKeyInWords says where a key written twice was written first, in the
// file:line:col form: "mapping key "x" is written twice (first at
// hub.yaml.state:8:3)".
func dupKeyInWords(path, msg string) string {
	return dupKeyMessage.ReplaceAllStringFunc(msg, func(m string) string {
		sub := dupKeyMessage.FindStringSubmatch(m)
		return fmt.Sprintf("mapping key %q is written twice (first at %s:%s:%s)", sub[1], path, sub[2], sub[3])
	})
}

// goTypeMessages are the YAML decoder's messages that speak of Go types.
var (
	unmarshalMessage = regexp.MustCompile(`cannot unmarshal (.+?) into Go (?:struct field \S+ of type|value of type) (\S+)`)
	usedWhereMessage = regexp.MustCompile(`(\S+) was used where (\S+) is expected`)
)

// inWords says what the decoder says of Go types in the words of the
// manifests' messages: "expected an integer, got a string".
func inWords(msg string) string {
	msg = unmarshalMessage.ReplaceAllStringFunc(msg, func(m string) string {
		sub := unmarshalMessage.FindStringSubmatch(m)
		return "expected " + goTypeWords(sub[2]) + ", got " + goTypeWords(sub[1])
	})
	return usedWhereMessage.ReplaceAllStringFunc(msg, func(m string) string {
		sub := usedWhereMessage.FindStringSubmatch(m)
		return "expected " + goTypeWords(sub[2]) + ", got " + goTypeWords(sub[1])
	})
}

// quotedValue is a double-quoted text of the decoder's messages that is not
// a field's name: a value it could not convert ("cannot convert \"…\" to
// boolean" of a tagged value), which may be a secret.
var quotedValue = regexp.MustCompile(`(field |mapping key )?"(?:[^"\\]|\\.)*"`)

// withoutValues takes the values out of a decoder's message, keeping the
// names of fields.
func withoutValues(msg string) string {
	return quotedValue.ReplaceAllStringFunc(msg, func(q string) string {
		if strings.HasPrefix(q, "field ") || strings.HasPrefix(q, "mapping key ") {
			return q // a name, not a value
		}
		return "a value"
	})
}

// goTypeWords names a Go type of the decoder's messages in words.
func goTypeWords(t string) string {
	switch {
	case t == "time.Time":
		return "a time (2006-01-02T15:04:05Z)"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "mapping" || strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "state.") || strings.HasPrefix(t, "*state."):
		return "a mapping"
	case t == "sequence" || strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return "a value of another kind"
}

// badNameError is a component name of a state that cannot be one.
type badNameError struct{ name string }

func (e *badNameError) Error() string {
	return fmt.Sprintf("the component name %q cannot be one: a component's name is a folder below another (letters, digits and _ . -, or a sow component's path, a/b), not absolute, without . or .. parts; was the state edited by hand?", e.name)
}

// at places a bad component name in the document it was read from: the
// first line that holds it as a key ("path:line:col: "), "path: " when none
// does (a journal's record).
func (e *badNameError) at(path string, data []byte) string {
	quoted, _ := json.Marshal(e.name)
	for i, line := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimLeft(line, " ")
		if bytes.HasPrefix(t, append([]byte(e.name), ':')) || bytes.HasPrefix(t, append(quoted, ':')) ||
			bytes.HasPrefix(t, []byte("'"+e.name+"':")) {
			return fmt.Sprintf("%s:%d:%d: ", path, i+1, len(line)-len(t)+1)
		}
	}
	return path + ": "
}

// maxComponentName bounds a component's name, which names files: a
// manifest's are at most 128 characters, a sow component's path more.
const maxComponentName = 4096

// ValidComponentName reports whether a name read from a state can be a
// component's: a relative path of clean parts (a sow component is named by
// its folder's, store/db, whatever characters the file system allows in
// it) that stays below the folder it is joined to — never "." or "..",
// absolute, empty, nor holding a NUL. filepath.IsLocal is the system's
// rule: on Windows a backslash separates too.
func ValidComponentName(name string) bool {
	return name != "" && name != "." && len(name) <= maxComponentName && filepath.IsLocal(name) && path.Clean(name) == name &&
		!strings.ContainsRune(name, 0)
}

var knownStatuses = map[string]bool{"": true, StatusDeployed: true, StatusUndeployed: true, StatusFailed: true, StatusSkipped: true, StatusIncomplete: true}

// check rejects what a hand edit can break: empty component records,
// statuses gantry does not know, and component names that are no folder
// below another (they name folders and files: .gantry/gen/<name> is
// removed once the component is undeployed).
func (s *State) check() error {
	if !knownStatuses[s.Status] {
		return fmt.Errorf("unknown stack status %q", s.Status)
	}
	for name, c := range s.Components {
		if !ValidComponentName(name) {
			return &badNameError{name}
		}
		if c == nil {
			return fmt.Errorf("component %s has an empty record", name)
		}
		if !knownStatuses[c.Status] {
			return fmt.Errorf("component %s has the unknown status %q (expected deployed, undeployed, failed, skipped or incomplete)", name, c.Status)
		}
	}
	return nil
}

// writeAtomic writes the state atomically: a temporary file in the same
// folder, fsync, rename over the old file, fsync of the folder. A reader, or
// a crash at any instant, sees either the old state or the new one, never a
// mix. The file is readable by its owner only: it holds secrets.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := atomicfile.Write(path, data, mode, true); err != nil {
		return fmt.Errorf("write state %s: %w", path, err)
	}
	return nil
}
