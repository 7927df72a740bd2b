package elaborate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeTuning(t *testing.T) {
	tests := []struct {
		name          string
		base, derived []string
		want          []string
	}{
		{"req supersedes req:comp", []string{"vault:api", "vault:web", "cdn:api"}, []string{"vault"}, []string{"cdn:api", "vault"}},
		{"req:comp supersedes req", []string{"vault", "cdn"}, []string{"vault:api", "vault:web"}, []string{"cdn", "vault:api", "vault:web"}},
		{"colon erases all", []string{"vault", "cdn:api"}, []string{":", "dns"}, []string{"dns"}},
		{"req: erases req", []string{"vault", "vault:api", "cdn:api"}, []string{"vault:"}, []string{"cdn:api"}},
		{":comp erases comp", []string{"vault:api", "cdn:api", "cdn:web", "vault"}, []string{":api"}, []string{"cdn:web", "vault"}},
		{"append", []string{"vault"}, []string{"cdn:api", "x.y:acm"}, []string{"vault", "cdn:api", "x.y:acm"}},
		{"no duplicates", []string{"vault"}, []string{"vault"}, []string{"vault"}},
		{"erase then add", []string{"vault:api"}, []string{"vault:", "vault:web"}, []string{"vault:web"}},
		{"empty derived", []string{"vault"}, nil, []string{"vault"}},
		{"empty base", nil, []string{":", "a"}, []string{"a"}},
		{"req:comp does not touch other comps", []string{"vault:api"}, []string{"vault:web"}, []string{"vault:api", "vault:web"}},
		{":comp leaves plain req", []string{"vault", "cdn:api"}, []string{":api"}, []string{"vault"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mergeTuning(tt.base, tt.derived)
			if diff := cmp.Diff(tt.want, got, cmpEmpty); diff != "" {
				t.Errorf("mergeTuning(%q, %q) (-want +got):\n%s", tt.base, tt.derived, diff)
			}
		})
	}
}

// cmpEmpty treats nil and empty slices alike.
var cmpEmpty = cmp.Comparer(func(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
})
