package elaborate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMergeTuning checks mergeTuning against what the Hub CLI's
// mergeRequiresTuning (agilestacks/hub 65b7e58) returns for the same lists:
// the first eight pairs were verified by running the Hub's function, the
// others computed by it too.
func TestMergeTuning(t *testing.T) {
	tests := []struct {
		name          string
		base, derived []string
		want          []string
	}{
		// Verified against the Hub's own function.
		{"colon first erases the base", []string{"vault", "etcd:c"}, []string{":", "helm"}, []string{"helm"}},
		{"colon last erases everything", []string{"vault", "etcd:c"}, []string{"helm", ":"}, nil},
		{"req:comp supersedes req", []string{"vault", "etcd:c"}, []string{"vault:x"}, []string{"etcd:c", "vault:x"}},
		{"req supersedes req:comp", []string{"vault:x", "etcd:c"}, []string{"vault"}, []string{"etcd:c", "vault"}},
		{":comp erases nothing (the Hub's quirk)", []string{"vault:x", "etcd:c"}, []string{":c"}, []string{"vault:x", "etcd:c"}},
		{"req: erases req", []string{"vault:x", "etcd:c"}, []string{"etcd:"}, []string{"vault:x"}},
		{"all forms together", []string{"vault", "gcp:b", "etcd:"}, []string{"helm", "gcp:", ":x", "vault:y"}, []string{"helm", "vault:y"}},
		{"a parameter condition is an entry like any other", []string{"a.enabled:c"}, []string{"b"}, []string{"a.enabled:c", "b"}},

		// Computed by the Hub's function.
		{"req supersedes every req:comp", []string{"vault:api", "vault:web", "cdn:api"}, []string{"vault"}, []string{"cdn:api", "vault"}},
		{"req:comp entries supersede req", []string{"vault", "cdn"}, []string{"vault:api", "vault:web"}, []string{"cdn", "vault:api", "vault:web"}},
		{"req: erases req and req:comp", []string{"vault", "vault:api", "cdn:api"}, []string{"vault:"}, []string{"cdn:api"}},
		{":comp leaves the component's entries", []string{"vault:api", "cdn:api", "cdn:web", "vault"}, []string{":api"}, []string{"cdn:api", "cdn:web", "vault"}},
		{"append", []string{"vault"}, []string{"cdn:api", "x.y:acm"}, []string{"vault", "cdn:api", "x.y:acm"}},
		{"no duplicates", []string{"vault"}, []string{"vault"}, []string{"vault"}},
		{"erase then add", []string{"vault:api"}, []string{"vault:", "vault:web"}, []string{"vault:web"}},
		{"empty derived", []string{"vault"}, nil, []string{"vault"}},
		{"empty derived still applies the base's erasures", []string{"vault", "gcp:b", "etcd:"}, nil, []string{"vault", "gcp:b"}},
		{"empty derived: a later req:comp of the base supersedes its req", []string{"a", "a:x", "b"}, nil, []string{"a:x", "b"}},
		{"empty base", nil, []string{":", "a"}, []string{"a"}},
		{"req:comp does not touch other comps", []string{"vault:api"}, []string{"vault:web"}, []string{"vault:api", "vault:web"}},
		{"duplicates counted once, newest kept", []string{"a", "b", "a"}, []string{"b"}, []string{"a", "b"}},
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
