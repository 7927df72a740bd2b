package manifest

import "testing"

func TestPosFileLine(t *testing.T) {
	for _, tc := range []struct {
		pos  Pos
		want string
	}{
		{Pos{File: "hub.yaml", Line: 12, Col: 5}, "hub.yaml:12"},
		{Pos{File: "base/hub.yaml", Line: 1}, "base/hub.yaml:1"},
		{Pos{File: "hub.yaml"}, "hub.yaml"},
		{Pos{Line: 3}, ":3"},
		{Pos{}, ""},
	} {
		if got := tc.pos.FileLine(); got != tc.want {
			t.Errorf("%#v.FileLine() = %q, want %q", tc.pos, got, tc.want)
		}
	}
}
