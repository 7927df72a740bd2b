package plugin

import "testing"

// FuzzInstanceConfig: a plugin's config read from a parameter's value, any
// value, is YAML or the value itself, never a failure of the decoder.
func FuzzInstanceConfig(f *testing.F) {
	f.Add("a: 1\nb: [x, y]\n")
	f.Add("plain text")
	f.Add("&x !t [a]")
	f.Add("{a: *x}")
	f.Fuzz(func(t *testing.T, v string) {
		if len(v) > 4096 {
			return
		}
		got, err := InstanceConfig(&Spec{Path: "p"}, map[string]string{"p": v})
		if err != nil || got == nil && v != "" {
			t.Fatalf("InstanceConfig(%q) = %v, %v", v, got, err)
		}
	})
}
