package state

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// goccyDecode is what Decode did before decodeFast: goccy alone, without the
// checks that follow it.
func goccyDecode(data []byte) (*State, error) { return decodeYAML(data) }

// oldDecode is Decode as it was: goccy, then the same checks.
func oldDecode(path string, data []byte) (*State, error) {
	s, err := decodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s", positioned(path, yaml.FormatError(err, false, false)))
	}
	return checked(path, s)
}

// sameState compares decoded states strictly: NaN equals NaN, and times must
// be the same instant in the same zone.
var sameState = cmp.Options{
	cmpopts.EquateNaNs(),
	cmp.Comparer(func(a, b time.Time) bool {
		an, ao := a.Zone()
		bn, bo := b.Zone()
		return a.Equal(b) && an == bn && ao == bo
	}),
}

// checkFast fails unless decodeFast reads data, and reads it as goccy does.
func checkFast(t testing.TB, data []byte) *State {
	t.Helper()
	fast, ok := decodeFast(data)
	if !ok {
		t.Fatalf("decodeFast refused the document:\n%s", data)
	}
	slow, err := goccyDecode(data)
	if err != nil {
		t.Fatalf("goccy refused a document decodeFast read: %v\n%s", err, data)
	}
	if diff := cmp.Diff(slow, fast, sameState); diff != "" {
		t.Fatalf("decodeFast differs from goccy (-goccy +fast):\n%s\n%s", diff, data)
	}
	return fast
}

func mustEncode(t testing.TB, s *State) []byte {
	t.Helper()
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// configState is a state whose one plugin instance has the given config.
func configState(config any) *State {
	s := New("cfg")
	c := s.Component("c")
	c.Status = StatusDeployed
	c.Plugins = []PluginInstance{{Key: "k", Name: "n", Config: config}}
	return s
}

// jsonString is a config type the encoder writes as JSON.
type jsonString string

func fastTable() map[string]*State {
	states := map[string]*State{
		"sample":      sample(),
		"every field": richState(),
		"empty":       New("empty"),
		"bench":       stateOf1000(),
		"real 100":    realState(100),
	}

	s := New("")
	s.Provides = map[string][]string{"empty": {}, "nil": nil, "one": {"x"}, "true": {"", "- x", "a: b"}}
	s.SecretOutputs = []string{"", " "}
	s.SecretParameters = []string{"a|b", "x.y"}
	states["empty lists in provides"] = s

	s = New("times")
	s.Updated = time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("", 5*3600+1800))
	c := s.Component("utc")
	c.Status = StatusDeployed
	c.Started = time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)
	c.Finished = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	c = s.Component("zones")
	c.Status = StatusFailed
	c.Started = time.Date(2026, 6, 1, 12, 0, 0, 0, time.FixedZone("X", -7*3600))
	c.Finished = time.Now()
	c = s.Component("local")
	c.Status = StatusSkipped
	c.Started = time.Date(2026, 1, 1, 0, 0, 0, 500, time.Local)
	c.Order = -3
	states["times"] = s

	s = New("names")
	for _, n := range []string{"a b: c", "", "true", "日本", "tab\tname", `q"uote`, `back\slash`, "nl\nname", "\xff", "-", "#x"} {
		c := s.Component(n)
		c.Status = StatusDeployed
		c.Order = len(n)
	}
	states["names needing quotes"] = s

	states["config scalars"] = configState(map[string]any{
		"string": "plain", "quoted": "true", "empty": "", "nl": "a\nb\n", "null": nil, "yes": true, "no": false,
		"int": 3, "neg": -3, "int64": int64(-9223372036854775808), "uint64": uint64(18446744073709551615), "zero": 0,
		"float": 1.5, "negzero": math.Copysign(0, -1), "whole": 2.0, "big": 1e21, "million": 1e6, "tiny": 1e-7,
		"max": math.MaxFloat64, "min": math.SmallestNonzeroFloat64, "negexp": -1.25e-10, "inf": math.Inf(1), "-inf": math.Inf(-1), "nan": math.NaN(),
		"map": map[string]any{}, "list": []any{}, "a: b": "c", "": "empty key", "1": "number key", "null ": "x",
	})
	states["config nesting"] = configState([]any{
		map[string]any{"k": "v", "deeper": map[string]any{"list": []any{[]any{[]any{"x", nil}}, map[string]any{}}}},
		[]any{"nested", []any{}, map[string]any{"a": 1}},
		nil, "", "- x", 1.5,
	})
	states["config scalar string"] = configState("plain")
	states["config quoted string"] = configState("a: b")
	states["config number"] = configState(uint64(7))
	states["config typed nil map"] = configState(map[string]any(nil))
	states["config int32 (JSON)"] = configState(int32(5))
	states["config JSON string"] = configState(jsonString("<a&b>\u2028"))

	s = New("plugins")
	c = s.Component("c")
	c.Status = StatusDeployed
	c.Plugins = []PluginInstance{{Name: "pinned", Children: []PluginInstance{
		{Name: "parallel", Label: "par", Children: []PluginInstance{
			{Key: "a", Name: "rec", Args: []string{"", "x"}, Config: map[string]any{"x": []any{1}}},
			{Key: "b", Name: "kubernetes", Resources: []Resource{{APIVersion: "v1", Kind: "ConfigMap", Name: "", Namespace: "n s", Weight: 1}}},
		}},
		{Key: "c", Name: "-hidden", Hidden: true, OnFail: []string{"ignore"}},
	}}}
	c.SetupPlugins = []PluginInstance{{Name: "echo", Path: "a.b", Args: []string{"hello world"}}}
	states["nested plugins"] = s
	return states
}

func TestDecodeFastTable(t *testing.T) {
	for name, s := range fastTable() {
		t.Run(name, func(t *testing.T) {
			checkFast(t, mustEncode(t, s))
		})
	}
}

// awkward are strings that YAML could read as something else, or that need
// escapes, or that a line-based reader could trip on.
var awkward = append([]string{
	"", " ", "  ", " x", "x ", " x ", "a  b", "a: b", "a:b", "a:", ":a", "a #b", "a#b", "#", "'", `"`, `\`, `\n`,
	"\n", "a\nb", "a\n", "\t", "a\tb", "\r", "ü", "日本", "🚀", "\u00a0", "a\u00a0#b", "\u2028", "\u0085", "\ufeff", "\ufffd",
	"\x00", "\x7f", "\xff", "a\xc3", "true", "True", "null", "NULL", "~", "1e3", "1e+06", "0x10", "0o7", "0b1", "010",
	"1_0", "_1", "1.", "1..2", "-", "--", "- x", "-x", "-1", "+1", ".5", "-.5", "1.5", "3", "a.b", "a|b", "x.y|z", "|", ">",
	"{", "}", "[a]", "a]", "a}", "a,b", "&a", "*a", "!a", "a !b", "%a", "@a", "a@b", "`a`", "<<", "a<<b", "a <b", "=", "?",
	"? a", "a ? b", "a - b", "a &b", "a *b", "a |b", "a >b", "a 'b'", `a "b"`, "a %b", "a @b", "a ,b", "a [b", "a {b",
	"---", "...", "a ---", "yes", "No", "on", "OFF", "y", "N", "inf", ".inf", "NaN", ".nan", "2026-01-02",
	"2026-01-02T03:04:05Z", "12:30", "1:2", "http://x:80/y", "a: b: c", "k: v\n  k2: v2",
}, trickyStrings...)

var alphabet = []rune("abcXYZ019 :#'\"\\\n\t\r-.,[]{}&*!|>%@`<=~?_+/üé日🚀\u00a0\u2028\u0085\ufeff\x00\x7f\ufffd")

func randString(r *rand.Rand) string {
	if r.Intn(3) == 0 {
		return awkward[r.Intn(len(awkward))]
	}
	var b strings.Builder
	for n := r.Intn(10); n > 0; n-- {
		switch r.Intn(8) {
		case 0:
			b.WriteString(awkward[r.Intn(len(awkward))])
		case 1:
			b.WriteByte(byte(0x80 + r.Intn(0x80))) // not UTF-8
		default:
			b.WriteRune(alphabet[r.Intn(len(alphabet))])
		}
	}
	return b.String()
}

var floats = []float64{0, 1, -1, 1.5, -0.25, 2, 1e6, 1e21, 1e20, 1e-7, 1e-5, 123456789.125, math.MaxFloat64,
	math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 1.0 / 3}

func randValue(r *rand.Rand, depth int) any {
	n := 12
	if depth > 3 {
		n = 8
	}
	switch r.Intn(n) {
	case 0:
		return nil
	case 1:
		return r.Intn(2) == 0
	case 2, 3:
		return randString(r)
	case 4:
		return r.Int63n(2000) - 1000
	case 5:
		return r.Uint64()
	case 6:
		return r.Intn(100) - 50
	case 7:
		if r.Intn(2) == 0 {
			return r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
		}
		return floats[r.Intn(len(floats))]
	case 8, 9:
		m := map[string]any{}
		for i := r.Intn(4); i > 0; i-- {
			m[randString(r)] = randValue(r, depth+1)
		}
		return m
	default:
		l := []any{}
		for i := r.Intn(4); i > 0; i-- {
			l = append(l, randValue(r, depth+1))
		}
		return l
	}
}

func randTime(r *rand.Rand) time.Time {
	if r.Intn(3) == 0 {
		return time.Time{}
	}
	locs := []*time.Location{time.UTC, time.Local, time.FixedZone("", -(3*3600 + 1800)), time.FixedZone("CET", 3600), time.FixedZone("", 14*3600)}
	t := time.Unix(r.Int63n(253402300799-62135596800)-62135596800+86400*2, 0).In(locs[r.Intn(len(locs))])
	if r.Intn(2) == 0 {
		t = t.Add(time.Duration(r.Intn(1e9)))
	}
	return t
}

func randStrings(r *rand.Rand) []string {
	var l []string
	for i := r.Intn(4) - 1; i > 0; i-- {
		l = append(l, randString(r))
	}
	return l
}

func randMap(r *rand.Rand) map[string]string {
	if r.Intn(3) == 0 {
		return nil
	}
	m := map[string]string{}
	for i := r.Intn(4); i > 0; i-- {
		m[randString(r)] = randString(r)
	}
	return m
}

func randPlugins(r *rand.Rand, depth int) []PluginInstance {
	var l []PluginInstance
	for i := r.Intn(4) - 1; i > 0; i-- {
		p := PluginInstance{Name: randString(r), Key: randString(r), Path: randString(r), Args: randStrings(r),
			Hidden: r.Intn(4) == 0, Label: randString(r), OnFail: randStrings(r)}
		if r.Intn(3) > 0 {
			p.Config = randValue(r, 0)
		}
		if depth < 3 && r.Intn(3) == 0 {
			p.Children = randPlugins(r, depth+1)
		}
		for j := r.Intn(4) - 1; j > 0; j-- {
			p.Resources = append(p.Resources, Resource{APIVersion: randString(r), Kind: randString(r), Namespace: randString(r),
				Name: randString(r), Weight: r.Intn(11) - 5, CRD: r.Intn(2) == 0, Keep: r.Intn(2) == 0, Adopted: r.Intn(2) == 0, Pending: r.Intn(2) == 0})
		}
		if r.Intn(2) == 0 {
			p.Cluster = randString(r)
		}
		l = append(l, p)
	}
	return l
}

// randState is a state with every field drawn at random, strings mostly
// awkward ones.
func randState(r *rand.Rand) *State {
	s := New(randString(r))
	s.Status, s.DeploymentID, s.LastRun, s.Updated = randString(r), randString(r), randString(r), randTime(r)
	s.Parameters, s.Outputs = randMap(r), randMap(r)
	s.SecretOutputs, s.SecretParameters = randStrings(r), randStrings(r)
	if r.Intn(2) == 0 {
		s.Provides = map[string][]string{}
		for i := r.Intn(4); i > 0; i-- {
			s.Provides[randString(r)] = randStrings(r)
		}
	}
	for i := r.Intn(5); i > 0; i-- {
		c := s.Component(randString(r))
		c.Status, c.Reason, c.Verb, c.LastRun, c.Dir = randString(r), randString(r), randString(r), randString(r), randString(r)
		c.Started, c.Finished, c.Order = randTime(r), randTime(r), r.Intn(2000)-1000
		c.Depends = randStrings(r)
		for j := r.Intn(5) - 1; j > 0; j-- {
			c.Parameters = append(c.Parameters, Parameter{Name: randString(r), Value: randString(r), Env: randString(r), Secret: r.Intn(2) == 0})
		}
		c.Outputs, c.SecretOutputs, c.Provides = randMap(r), randStrings(r), randStrings(r)
		c.Fingerprint, c.SpecVersion = randString(r), randString(r)
		if r.Intn(2) == 0 {
			c.Inputs = &Inputs{Verb: randString(r), Outputs: randMap(r), Files: randMap(r), Reads: randMap(r)}
		}
		c.Plugins, c.SetupPlugins = randPlugins(r, 0), randPlugins(r, 0)
	}
	return s
}

func TestDecodeFastRandom(t *testing.T) {
	r := rand.New(rand.NewSource(20261121))
	for i := range 600 {
		s := randState(r)
		data := mustEncode(t, s)
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkFast(t, data) })
	}
}

// TestDecodeFastAwkwardStrings puts every awkward string everywhere a string goes.
func TestDecodeFastAwkwardStrings(t *testing.T) {
	for _, v := range awkward {
		s := New(v)
		s.Status, s.DeploymentID, s.LastRun = v, v, v
		s.Parameters, s.Outputs = map[string]string{v: v}, map[string]string{v: v, v + "x": v}
		s.SecretOutputs, s.SecretParameters = []string{v}, []string{v, v}
		s.Provides = map[string][]string{v: {v}}
		c := s.Component(v)
		c.Status, c.Reason, c.Verb, c.LastRun, c.Dir, c.Fingerprint, c.SpecVersion = v, v, v, v, v, v, v
		c.Depends, c.SecretOutputs, c.Provides = []string{v}, []string{v}, []string{v}
		c.Parameters = []Parameter{{Name: v, Value: v, Env: v}}
		c.Outputs = map[string]string{v: v}
		c.Inputs = &Inputs{Verb: v, Outputs: map[string]string{v: v}, Files: map[string]string{v: v}, Reads: map[string]string{v: v}}
		c.Plugins = []PluginInstance{{Name: v, Key: v, Path: v, Args: []string{v}, Label: v, OnFail: []string{v},
			Config:    map[string]any{v: v, v + "l": []any{v, map[string]any{v: v}}},
			Resources: []Resource{{APIVersion: v, Kind: v, Namespace: v, Name: v}}, Cluster: v}}
		c.SetupPlugins = []PluginInstance{{Name: v, Config: v}}
		checkFast(t, mustEncode(t, s))
	}
}

// TestDecodeFastRefusesWhatEncodeWritesOddly: documents Encode writes that
// decodeFast leaves to goccy on purpose.
func TestDecodeFastRefusesWhatEncodeWritesOddly(t *testing.T) {
	deep := any("bottom")
	for range maxFastDepth + 1 {
		deep = []any{deep}
	}
	year := New("year")
	year.Updated = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	bc := New("bc")
	bc.Component("c").Started = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, s := range map[string]*State{
		"JSON config":            configState(map[string]string{"a": "b"}),
		"JSON list config":       configState([]string{"a"}),
		"config deeper than 100": configState(deep),
		"year after 9999":        year,
		"year before 0":          bc,
		"JSON struct":            configState(struct{ A string }{"a"}),
		"JSON raw non-printable": configState(jsonString("\u0085")),
	} {
		t.Run(name, func(t *testing.T) {
			data := mustEncode(t, s)
			if _, ok := decodeFast(data); ok {
				t.Fatalf("decodeFast read\n%s", data)
			}
			if _, err := goccyDecode(data); err != nil {
				t.Fatalf("goccy: %v", err)
			}
		})
	}
}

// TestDecodeFastPassesOverComments: blank lines and lines of comment, the
// usual hand edits, anywhere in a state Encode wrote, keep it on the fast
// path, read as goccy reads it.
func TestDecodeFastPassesOverComments(t *testing.T) {
	for name, doc := range map[string]string{
		"comment line":         "# state\nversion: 1\nstack: x\n",
		"comment in component": "version: 1\nstack: x\ncomponents:\n  \"a\":\n    # c\n    status: deployed\n    order: 0\n",
		"blank line":           "version: 1\n\nstack: x\n",
		"indented comment":     "version: 1\nstack: x\n        # far in\n  # and out\n",
		"comment at the end":   "version: 1\nstack: x\n# end\n",
		"after a value":        "version: 1\nstack: x # c\n",
		"after a key":          "version: 1\nstack: x\ncomponents: # all\n  \"a\": # one\n    status: deployed  # spaces\n    order: 0 #\n",
		"after a list item":    "version: 1\nstack: x\nsecretOutputs:\n  - a # c\n",
		"hash in quotes":       "version: 1\nstack: \"x # y\" # c \"quoted\"\n",
		"escaped quote":        "version: 1\nstack: \"x\\\" # y\" # c\n",
		"hash without space":   "version: 1\nstack: x#y\n",
		"quote in the comment": "version: 1\nstack: x # it's \"\n",
	} {
		t.Run(name, func(t *testing.T) { checkFast(t, []byte(doc)) })
	}
	// Every state of the table, with a comment and a blank line after
	// each of its lines.
	for name, s := range fastTable() {
		t.Run(name, func(t *testing.T) {
			data := mustEncode(t, s)
			edited := strings.ReplaceAll(string(data), "\n", "\n  # hand edit\n\n")
			got := checkFast(t, []byte(edited))
			if diff := cmp.Diff(checkFast(t, data), got, sameState); diff != "" {
				t.Fatalf("the comments changed the state:\n%s", diff)
			}
			// And a comment after every line's value.
			after := strings.ReplaceAll(string(data), "\n", " # it's a \"hand\" edit\n")
			if diff := cmp.Diff(checkFast(t, data), checkFast(t, []byte(after)), sameState); diff != "" {
				t.Fatalf("the comments after the values changed the state:\n%s", diff)
			}
		})
	}
}

// fallbackDocs are documents Encode does not write: decodeFast must refuse
// them, and Decode must give what it gave before, state or error.
var fallbackDocs = map[string]string{
	"quote in plain comment": "version: 1\nstack: it's # c\n",
	"comment after tab":      "version: 1\nstack: x\t# c\n",
	"hash after quote":       "version: 1\nstack: \"x\"# c\n",
	"flow map":               "version: 1\nstack: x\nparameters: {a: b}\n",
	"flow list":              "version: 1\nstack: x\nsecretOutputs: [a, b]\n",
	"flow config":            "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config: {a: 1}\n",
	"anchor":                 "version: 1\nstack: &s x\nlastRun: *s\n",
	"alias in config":        "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config:\n          a: &v 1\n          b: *v\n",
	"tag":                    "version: 1\nstack: !!str 5\n",
	"tag in config":          "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config: !!str 5\n",
	"unknown field":          "version: 1\nstack: x\nextra: 1\n",
	"unknown comp field":     "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    colour: red\n",
	"hex version":            "version: 0x1\nstack: x\n",
	"octal order":            "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 010\n",
	"float version":          "version: 1.0\nstack: x\n",
	"plus version":           "version: +1\nstack: x\n",
	"single quotes":          "version: 1\nstack: 'x y'\n",
	"plain number string":    "version: 1\nstack: 1.50\n",
	"null string":            "version: 1\nstack: null\n",
	"bool string":            "version: 1\nstack: true\n",
	"tilde":                  "version: 1\nstack: ~\n",
	"empty value":            "version: 1\nstack:\n",
	"crlf":                   "version: 1\r\nstack: x\r\n",
	"tab indent":             "version: 1\nstack: x\nparameters:\n\ta: b\n",
	"document start":         "---\nversion: 1\nstack: x\n",
	"document end":           "version: 1\nstack: x\n...\n",
	"no final newline":       "version: 1\nstack: x",
	"empty document":         "",
	"only spaces":            "   \n",
	"fields out of order":    "stack: x\nversion: 1\n",
	"duplicate field":        "version: 1\nstack: x\nstack: y\n",
	"unsorted keys":          "version: 1\nstack: x\nparameters:\n  b: x\n  a: y\n",
	"duplicate keys":         "version: 1\nstack: x\nparameters:\n  a: x\n  a: y\n",
	"indentless list":        "version: 1\nstack: x\nsecretOutputs:\n- a\n",
	"four-space indent":      "version: 1\nstack: x\nparameters:\n    a: b\n",
	"literal block":          "version: 1\nstack: |\n  x\n",
	"folded block":           "version: 1\nstack: >-\n  x\n  y\n",
	"multi-line plain":       "version: 1\nstack: a\n  b\n",
	"multi-line quoted":      "version: 1\nstack: \"a\n  b\"\n",
	"escaped line break":     "version: 1\nstack: \"a\\\n  b\"\n",
	"yaml-only escape":       "version: 1\nstack: \"a\\eb\\_c\\N\"\n",
	"bad escape":             "version: 1\nstack: \"a\\qb\"\n",
	"short hex escape":       "version: 1\nstack: \"a\\x4\"\n",
	"surrogate escape":       "version: 1\nstack: \"\\ud83d\\ude80\"\n",
	"raw tab in quotes":      "version: 1\nstack: \"a\tb\"\n",
	"text after quote":       "version: 1\nstack: \"a\" b\n",
	"unclosed quote":         "version: 1\nstack: \"a\n",
	"plain component name":   "version: 1\nstack: x\ncomponents:\n  a:\n    status: deployed\n    order: 0\n",
	"no order":               "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n",
	"no status":              "version: 1\nstack: x\ncomponents:\n  \"a\":\n    order: 0\n",
	"empty component":        "version: 1\nstack: x\ncomponents:\n  \"a\":\n",
	"null component":         "version: 1\nstack: x\ncomponents:\n  \"a\": null\n",
	"no components":          "version: 1\nstack: x\ncomponents:\n",
	"secret false":           "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    parameters:\n      - name: p\n        value: v\n        secret: false\n",
	"parameter no value":     "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    parameters:\n      - name: p\n",
	"weight zero":            "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        resources:\n          - apiVersion: v1\n            kind: K\n            name: x\n            weight: 0\n",
	"quoted time":            "version: 1\nstack: x\nupdated: \"2026-01-02T03:04:05Z\"\n",
	"space-separated time":   "version: 1\nstack: x\nupdated: 2026-01-02 03:04:05\n",
	"bad time":               "version: 1\nstack: x\nupdated: 2026-13-02T03:04:05Z\n",
	"date only":              "version: 1\nstack: x\nupdated: 2026-01-02\n",
	"empty list":             "version: 1\nstack: x\nsecretOutputs:\n",
	"config null key":        "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config:\n          null: 1\n",
	"config number key":      "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config:\n          1: x\n",
	"config merge key":       "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config:\n          <<: {a: 1}\n",
	"config bare key":        "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config:\n          a:\n          b: 1\n",
	"config True":            "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config: True\n",
	"config hex":             "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config: 0x1F\n",
	"config hidden sequence": "version: 1\nstack: x\ncomponents:\n  \"a\":\n    status: deployed\n    order: 0\n    plugins:\n      - name: n\n        config:\n        - a\n",
	"version 2 hex":          "version: 0x2\nstack: x\n",
	"bad status":             "version: 1\nstack: x\nstatus: 'gone'\n",
	"binary":                 "\x00\x01\x02version: 1\n",
}

func TestDecodeFallsBack(t *testing.T) {
	for name, doc := range fallbackDocs {
		t.Run(name, func(t *testing.T) {
			if s, ok := decodeFast([]byte(doc)); ok {
				t.Fatalf("decodeFast read %q as %+v", doc, s)
			}
			want, wantErr := oldDecode("hub.yaml.state", []byte(doc))
			if probs := shapeProblems([]byte(doc)); wantErr != nil && len(probs) > 0 {
				// A document of the wrong shape is told in words of its
				// own (TestDecodeNamesEveryShapeProblem).
				wantErr = shapeError("hub.yaml.state", probs)
			}
			if strings.TrimSpace(doc) == "" {
				// An empty file is said to be one (TestDecodeEmpty).
				want = nil
				_, wantErr = Decode("hub.yaml.state", nil)
			}
			got, err := Decode("hub.yaml.state", []byte(doc))
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, want %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got, sameState); diff != "" {
				t.Fatalf("(-old +new):\n%s", diff)
			}
		})
	}
}

// TestDecodeAsBefore: for documents Encode writes, Decode gives what it gave
// before, errors of the checks after parsing included.
func TestDecodeAsBefore(t *testing.T) {
	bad := New("bad")
	bad.Component("c").Status = "gone"
	v2 := New("v2")
	v2.Version = 2
	for name, s := range map[string]*State{"rich": richState(), "empty": New("x"), "bad status": bad, "version 2": v2} {
		t.Run(name, func(t *testing.T) {
			data := mustEncode(t, s)
			if _, ok := decodeFast(data); !ok {
				t.Fatal("decodeFast refused it")
			}
			want, wantErr := oldDecode("st", data)
			got, err := Decode("st", data)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, want %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got, sameState); diff != "" {
				t.Fatalf("(-old +new):\n%s", diff)
			}
		})
	}
}

// FuzzDecodeFast: whatever decodeFast reads, goccy reads too, as the same
// state.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range fastTable() {
		if data, err := Encode(s); err == nil && len(data) < 1<<16 {
			f.Add(data)
			f.Add([]byte(strings.ReplaceAll(string(data), "\n", " # c\n")))
		}
	}
	r := rand.New(rand.NewSource(1))
	for range 30 {
		if data, err := Encode(randState(r)); err == nil {
			f.Add(data)
		}
	}
	for _, doc := range fallbackDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeFast(data)
		if !ok {
			return
		}
		slow, err := goccyDecode(data)
		if err != nil {
			t.Fatalf("decodeFast read what goccy refuses (%v):\n%q", err, data)
		}
		if diff := cmp.Diff(slow, fast, sameState); diff != "" {
			t.Fatalf("decodeFast differs from goccy (-goccy +fast):\n%s\n%q", diff, data)
		}
	})
}

// realState is a state shaped like a real one: each component with five
// parameters, three outputs, a fingerprint, start and finish times, and a
// kubernetes plugin instance with a config and a few resources.
func realState(n int) *State {
	s := New("bench")
	s.Status, s.DeploymentID, s.LastRun = StatusDeployed, "292c194bd252d50a", "20261121T194839Z-d60b4b"
	s.Updated = time.Date(2026, 11, 21, 19, 48, 39, 0, time.UTC)
	s.Parameters = map[string]string{"dns.domain": "example.com", "cloud.region": "eu-west-1"}
	started := time.Date(2026, 11, 21, 19, 0, 0, 0, time.UTC)
	for i := range n {
		name := fmt.Sprintf("svc-%05d", i)
		c := s.Component(name)
		c.Status, c.Verb, c.LastRun, c.Order = StatusDeployed, "deploy", "20261121T194839Z-d60b4b", i
		c.Started = started.Add(time.Duration(i) * 123456789 * time.Nanosecond)
		c.Finished = c.Started.Add(2*time.Second + 345678912*time.Nanosecond)
		c.Dir = "components/" + name
		if i > 0 {
			c.Depends = []string{fmt.Sprintf("svc-%05d", i-1)}
		}
		c.Parameters = []Parameter{
			{Name: "dns.domain", Value: "example.com", Env: "DOMAIN"},
			{Name: "cloud.region", Value: "eu-west-1", Env: "REGION"},
			{Name: "component.name", Value: name, Env: "NAME"},
			{Name: "replicas", Value: "3", Env: "REPLICAS"},
			{Name: "db.password", Value: "s3cr3t: \"x\"", Env: "DB_PASSWORD", Secret: true},
		}
		c.Outputs = map[string]string{
			"url":      fmt.Sprintf("https://%s.example.com:8443/v1", name),
			"endpoint": name + ".svc.cluster.local",
			"port":     "8443",
		}
		c.Fingerprint = fmt.Sprintf("%032x", uint64(i)*0x9e3779b97f4a7c15)
		c.SpecVersion = "2"
		c.Plugins = []PluginInstance{{Key: "kubernetes", Name: "kubernetes",
			Config: map[string]any{"kustomize": ".", "timeout": "5m", "wait": true},
			Resources: []Resource{
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name + "-config"},
				{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: name},
				{APIVersion: "v1", Kind: "Service", Namespace: "apps", Name: name, Weight: 5},
			}}}
	}
	return s
}

// BenchmarkDecode10k reads a 10,000-component state: decodeFast against
// goccy, which Decode used before.
func BenchmarkDecode10k(b *testing.B) {
	data := mustEncode(b, realState(10000))
	if _, ok := decodeFast(data); !ok {
		b.Fatal("decodeFast refused the document")
	}
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeFast(data); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("goccy", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := goccyDecode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// snippets are what TestDecodeFastMutations puts into documents: scalars of
// every kind YAML knows, and lines a hand edit could leave.
var snippets = []string{
	"x", "a b", "a:b", "a: b", "a #b", "#c", "", " ", "true", "True", "TRUE", "false", "yes", "no", "on", "null", "Null", "~",
	"0", "-0", "007", "0x1F", "0o17", "0b101", "1_000", "_1", "1e5", "1e+5", "1E5", "1.5e3", "1.", ".5", "-.5", "+1", "1.0",
	"-1.5", "1..2", "1-2", "1:2", "99999999999999999999", "-99999999999999999999", "1e999", "1.0e999", ".inf", "-.inf", ".Inf",
	".nan", ".NaN", "inf", "nan", "2026-01-02T03:04:05Z", "2026-1-2T3:4:5Z", "2026-01-02t03:04:05Z", "2026-01-02 03:04:05",
	"2026-01-02", "2026-01-02T03:04:05.123+05:30", "2026-02-30T00:00:00Z", "10000-01-01T00:00:00Z",
	`""`, `"a"`, `"a\"b"`, `"\x41"`, `"\xff"`, `"\u00e9"`, `"\U0001F680"`, `"\e"`, `"\0"`, `"\/"`, `"\ "`, `"\N"`, `"\_"`,
	`"\L"`, `"\ud800"`, `"\udc00"`, `"\ud83d\ude80"`, `"\U00110000"`, `"\x4g"`, `"a" b`, `"a`, `'a'`, `'it''s'`, "|", "|-", ">",
	"{}", "[]", "{a: 1}", "[a, b]", "&a x", "*a", "!!str 1", "!t x", "- x", "-", "? x", "%x", "@x", "`x`", "<<", "a<<b",
	"\ta", "a\t", "a\u00a0b", "\u2028", "\u0085", "\ufeff", "\xff", "日本", "🚀", "a\\b", "---", "...",
}

// mutate changes one line of a document: its indent, its value, or the
// line itself.
func mutate(r *rand.Rand, doc string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	i := r.Intn(len(lines))
	l := lines[i]
	text := strings.TrimLeft(l, " ")
	ind := len(l) - len(text)
	snippet := snippets[r.Intn(len(snippets))]
	switch r.Intn(9) {
	case 0:
		ind += r.Intn(5) - 2
		if ind < 0 {
			ind = 0
		}
		lines[i] = strings.Repeat(" ", ind) + text
	case 1, 2, 3:
		if j := strings.Index(text, ": "); j >= 0 {
			lines[i] = l[:ind+j+2] + snippet
		} else if strings.HasPrefix(text, "- ") {
			lines[i] = l[:ind+2] + snippet
		} else if strings.HasSuffix(text, ":") {
			lines[i] = l + " " + snippet
		} else {
			lines[i] = l[:ind] + snippet + ":"
		}
	case 4:
		if j := strings.Index(text, ":"); j >= 0 {
			lines[i] = l[:ind] + snippet + text[j:]
		}
	case 5:
		lines = append(lines[:i], lines[i+1:]...)
	case 6:
		lines = append(lines[:i+1], lines[i:]...)
	case 7:
		if i+1 < len(lines) {
			lines[i], lines[i+1] = lines[i+1], lines[i]
		}
	default:
		extra := strings.Repeat(" ", r.Intn(4)*2) + []string{"", "- ", "k: ", "k:"}[r.Intn(4)] + snippet
		lines = append(lines[:i], append([]string{extra}, lines[i:]...)...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestDecodeFastMutations: documents near what Encode writes, one or two
// lines changed; whatever decodeFast reads, goccy reads the same.
func TestDecodeFastMutations(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	bases := []string{string(mustEncode(t, richState())), string(mustEncode(t, sample())), string(mustEncode(t, realState(2)))}
	for range 20 {
		bases = append(bases, string(mustEncode(t, randState(r))))
	}
	read, n := 0, 5000
	if testing.Short() {
		n = 500
	}
	for i := range n {
		doc := mutate(r, bases[i%len(bases)])
		if r.Intn(2) == 0 {
			doc = mutate(r, doc)
		}
		fast, ok := decodeFast([]byte(doc))
		if !ok {
			continue
		}
		read++
		slow, err := goccyDecode([]byte(doc))
		if err != nil {
			t.Fatalf("decodeFast read what goccy refuses (%v):\n%s", err, doc)
		}
		if diff := cmp.Diff(slow, fast, sameState); diff != "" {
			t.Fatalf("decodeFast differs from goccy (-goccy +fast):\n%s\n%s", diff, doc)
		}
	}
	t.Logf("decodeFast read %d of %d mutated documents", read, n)
}
