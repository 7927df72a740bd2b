package kubernetes

import "testing"

func TestOutputText(t *testing.T) {
	for _, tc := range []struct {
		v          any
		base64Data bool
		want, err  string
	}{
		{v: "10.0.0.7", want: "10.0.0.7"},
		{v: "czNjcmV0", base64Data: true, want: "s3cret"},
		{v: "not base64!", base64Data: true, err: "the Secret's data is not base64"},
		{v: int64(5432), want: "5432"},
		{v: float64(1.5), want: "1.5"},
		{v: true, want: "true"},
		{v: map[string]any{"b": int64(1), "a": "x"}, want: `{"a":"x","b":1}`},
		{v: []any{"a", int64(2)}, want: `["a",2]`},
	} {
		got, err := outputText(tc.v, tc.base64Data)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("outputText(%#v) = %q, %v; want error %q", tc.v, got, err, tc.err)
			}
		case err != nil || got != tc.want:
			t.Errorf("outputText(%#v) = %q, %v; want %q", tc.v, got, err, tc.want)
		}
	}
}
