package state

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// TestDecodeHubState: a state the Hub CLI wrote — gzip-compressed, its
// default, or plain YAML of kind: state — is said to be one, with what to
// do, instead of "expected a mapping" or a list of unknown fields.
func TestDecodeHubState(t *testing.T) {
	const plain = "version: 1\nkind: state\ntimestamp: 2026-12-01T05:03:07Z\nstatus: deployed\nmeta:\n  kind: stack\n  name: base\nstackParameters:\n- name: dns.domain\n  value: base.example.com\n"
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(plain))
	w.Close()
	for _, tc := range []struct {
		name, data, want string
	}{
		{"gzip", gz.String(), "state s.state is gzip-compressed, as the Hub CLI writes its states: gantry does not deploy on a Hub CLI state nor take one over"},
		{"plain", plain, "state s.state is a Hub CLI state (kind: state): gantry does not deploy on a Hub CLI state nor take one over"},
		{"quoted kind", strings.Replace(plain, "kind: state", `kind: "state"`, 1), "is a Hub CLI state (kind: state)"},
		// A state of gantry's that a hand edit broke is not taken for one.
		{"gantry's, broken", "version: 1\nstack: s\nkinds: state\n", `s.state:3:1: the state is not valid: unknown field "kinds"`},
	} {
		_, err := Decode("s.state", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}

// TestDecodeEmpty: an empty state file (gantry never writes one) is said
// to be empty, not of "format version 0".
func TestDecodeEmpty(t *testing.T) {
	for _, data := range []string{"", "\n", " \n\t\n"} {
		_, err := Decode("hub.yaml.state", []byte(data))
		if err == nil || !strings.Contains(err.Error(), "state hub.yaml.state is empty: gantry never writes an empty state") {
			t.Errorf("%q: %v", data, err)
		}
	}
}
