package component

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"
)

// encrypt is what a Hub component does with HUB_RANDOM.
func encrypt(t *testing.T, plain string, pad []byte) string {
	t.Helper()
	in := make([]byte, len(pad))
	copy(in, plain)
	for i := range in {
		in[i] ^= pad[i]
	}
	return base64.RawStdEncoding.EncodeToString(in)
}

func TestDecodeSecrets(t *testing.T) {
	pad, env, err := NewPad(64)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := base64.RawStdEncoding.DecodeString(env); string(got) != string(pad) {
		t.Fatalf("the environment's pad is not the pad")
	}
	for _, tc := range []struct {
		name, text string
		want       map[string]string
		provides   []string
		err        string
	}{
		{"two values", encrypt(t, "db.password = s3cret\ntoken = \"abc\"\n", pad), map[string]string{"db.password": "s3cret", "token": "abc"}, nil, ""},
		{"provides", encrypt(t, "provides = vault,etcd\n", pad), map[string]string{}, []string{"vault", "etcd"}, ""},
		{"empty", encrypt(t, "", pad), map[string]string{}, nil, ""},
		{"not base64", strings.Repeat("!", base64.RawStdEncoding.EncodedLen(64)), nil, nil, "not base64"},
		{"wrong length", base64.RawStdEncoding.EncodeToString([]byte("short")), nil, nil, "is 5 bytes, the one-time pad (HUB_RANDOM) 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, provides, err := DecodeSecrets(tc.text, pad)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) || !slices.Equal(provides, tc.provides) {
				t.Fatalf("DecodeSecrets = %v, %v, %v; want %v, %v", got, provides, err, tc.want, tc.provides)
			}
		})
	}
	if _, _, err := NewPad(MaxPadBytes + 1); err == nil {
		t.Error("a pad larger than MaxPadBytes was made")
	}
}
