package state

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// tricky strings YAML could read as something else, or that need escapes.
var trickyStrings = []string{
	"", " ", "true", "False", "yes", "NO", "on", "Off", "y", "N", "null", "Null", "~",
	"0", "012", "1.5", "-1", "+1", ".5", ".inf", "-.inf", ".nan", "0x1F", "0o17", "1e3", "1_000",
	"2026-01-02", "2026-01-02T03:04:05Z", "12:30", "a: b", "a:b", "a #b", "a#b", "trailing ", " leading",
	"ends:", "- item", "? key", "[x]", "{x}", "&anchor", "*alias", "!tag", "|", ">", "'q'", `"q"`, "%d", "@x",
	"`x`", "<<", "=", "line1\nline2", "tab\there", "bell\a", "vt\v", "nul\x00", "del\x7f", "crlf\r\n",
	"ünïcödé", "日本語", "emoji 🚀", "zero\u200bwidth", "bom\ufeff", "ls\u2028ps\u2029", "nel\u0085",
	"back\\slash", "http://localhost:8080/v1", "postgres://u:p@h:5432/db?sslmode=disable",
	"sha256:abc", "a,b", "---", "...", "# comment",
}

func richState() *State {
	s := New("demo")
	s.Status = StatusDeployed
	s.DeploymentID = "292c194bd252d50a"
	s.LastRun = "20261121T194839Z-d60b4b"
	s.Updated = time.Date(2026, 11, 21, 19, 48, 39, 0, time.UTC)
	s.Parameters = map[string]string{}
	s.Outputs = map[string]string{}
	for i, v := range trickyStrings {
		s.Parameters["p"+string(rune('a'+i%26))+v] = v
		s.Outputs[v] = v
	}
	s.SecretOutputs = append([]string(nil), trickyStrings...)
	s.Provides = map[string][]string{"postgres": {"db"}, "true": {"1", "x y"}}
	c := s.Component("db")
	c.Status = StatusDeployed
	c.Reason = "reason: with colon"
	c.Verb = "deploy"
	c.Started = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	c.Finished = time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC)
	c.LastRun = "r1"
	c.Order = 3
	c.Dir = "components/db"
	c.Depends = []string{"net", "true"}
	for _, v := range trickyStrings {
		c.Parameters = append(c.Parameters, Parameter{Name: "n" + v, Value: v, Env: "E"})
	}
	c.Parameters = append(c.Parameters, Parameter{Name: "no-env", Value: ""})
	c.Outputs = map[string]string{"db.host": "localhost", "true": "yes", "multi": "a\nb\n"}
	c.SecretOutputs = []string{"true"}
	c.Provides = []string{"postgres"}
	c.Fingerprint = "d02da7a732ff227271344e6615392f66"
	c.SpecVersion = "2"
	c.Plugins = []PluginInstance{
		{Key: "tf", Name: "terraform", Path: "plugins/tf", Args: []string{"-x", "a b"}, Config: map[string]any{
			"dir": ".", "vars": map[string]any{"count": uint64(3), "ratio": 1.5, "on": true, "none": nil, "empty": map[string]any{}},
			"list": []any{"a", uint64(1), map[string]any{"k": "v"}, []any{"nested"}, []any{}},
		}},
		{Name: "echo", Args: []string{"hello"}, Hidden: true},
		{Name: "fail", Key: "f", Label: "try: it", OnFail: []string{"warn", "next"}},
		{Name: "pinned", Children: []PluginInstance{{Key: "a", Name: "rec"}, {Name: "unpinned", Children: []PluginInstance{{Key: "b", Name: "rec"}}}}},
		{Key: "app", Name: "kubernetes", Resources: []Resource{
			{APIVersion: "v1", Kind: "Namespace", Name: "demo"},
			{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web", Weight: -5},
			{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com", CRD: true, Keep: true, Adopted: true, Pending: true},
		}},
	}
	c.SetupPlugins = []PluginInstance{{Key: "setup", Name: "rec", Config: "plain"}}
	s.Component("true").Status = StatusFailed
	s.Component("a b: c").Status = StatusIncomplete
	return s
}

// roundTrip encodes s, decodes it back and fails unless it is the same
// state; it returns the document.
func roundTrip(t *testing.T, s *State) []byte {
	t.Helper()
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode("state", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if diff := cmp.Diff(s, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s\n%s", diff, data)
	}
	return data
}

func TestEncodeRoundTrip(t *testing.T) {
	for name, s := range map[string]*State{"sample": sample(), "every field": richState(), "empty": New("empty")} {
		t.Run(name, func(t *testing.T) {
			data := roundTrip(t, s)
			if again, err := Encode(s); err != nil || string(again) != string(data) {
				t.Errorf("encoding is not deterministic (%v)", err)
			}
		})
	}
}

func TestEncodeWritesPlainWhenSafe(t *testing.T) {
	s := New("demo")
	c := s.Component("api")
	c.Status = StatusDeployed
	c.Outputs = map[string]string{"api.url": "http://localhost:8080/v1", "port": "8080", "flag": "true"}
	data, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"    status: deployed\n", "      api.url: http://localhost:8080/v1\n", `      port: "8080"` + "\n", `      flag: "true"` + "\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("missing %q in\n%s", want, data)
		}
	}
}

// FuzzEncodeString checks that any text survives the state file: as a key, a
// value, a list item and a plugin config value.
func FuzzEncodeString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) {
			t.Skip("YAML holds text, not bytes")
		}
		s := New("fuzz")
		s.Outputs = map[string]string{v: v}
		// A component's name names folders: a state holds no other
		// (TestValidComponentName); the text is a key of every other map.
		name := v
		if !ValidComponentName(name) {
			name = "c"
		}
		c := s.Component(name)
		c.Status = StatusDeployed
		c.Depends = []string{v}
		c.Parameters = []Parameter{{Name: v, Value: v, Env: v}}
		c.Plugins = []PluginInstance{{Key: "k", Name: "n", Config: map[string]any{v: v, "list": []any{v}}}}
		roundTrip(t, s)
	})
}
