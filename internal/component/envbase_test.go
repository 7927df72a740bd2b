package component

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// environOracle is Environ as it was before EnvBase: one map of the whole
// environment per process. EnvBase must give the same lists.
func environOracle(osEnv []string, keepTFVars bool, extra ...[]string) []string {
	index := map[string]int{}
	var out []string
	add := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := index[k]; ok {
			out[i] = kv
			return
		}
		index[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range osEnv {
		if !keepTFVars && strings.HasPrefix(kv, "TF_VAR_") {
			continue
		}
		add(kv)
	}
	for _, list := range extra {
		for _, kv := range list {
			add(kv)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// TestEnvBaseLikeOracle: random environments with repeated names, names
// without a value, TF_VAR_ variables and more own variables than fewExtras
// give the environment the oracle gives, the base shared by many calls.
func TestEnvBaseLikeOracle(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	names := []string{"A", "B", "PATH", "HOME", "TF_VAR_x", "TF_VAR_y", "HUB_COMPONENT", "X", "AB", "A_", ""}
	entry := func() string {
		k := names[r.Intn(len(names))]
		if r.Intn(4) > 0 && k == "X" {
			k = fmt.Sprintf("V%d", r.Intn(80)) // many distinct own names
		}
		switch r.Intn(6) {
		case 0:
			return k // no '='
		case 1:
			return k + "="
		default:
			return fmt.Sprintf("%s=%d=%d", k, r.Intn(9), r.Intn(9))
		}
	}
	list := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = entry()
		}
		return out
	}
	for trial := 0; trial < 3000; trial++ {
		osEnv := list(r.Intn(20))
		keep := r.Intn(2) == 0
		base := NewEnvBase(osEnv, keep)
		for call := 0; call < 3; call++ {
			var extra [][]string
			for k := r.Intn(4); k > 0; k-- {
				extra = append(extra, list(r.Intn(3*fewExtras)))
			}
			want := environOracle(osEnv, keep, extra...)
			if diff := cmp.Diff(want, base.Environ(extra...)); diff != "" {
				t.Fatalf("os %q keep %v extra %q (-oracle +EnvBase):\n%s", osEnv, keep, extra, diff)
			}
		}
	}
}

// BenchmarkEnviron: a process's environment, as a run builds one per
// process: 35 OS variables and 12 of its own.
func BenchmarkEnviron(b *testing.B) {
	var osEnv, own []string
	for i := 0; i < 35; i++ {
		osEnv = append(osEnv, fmt.Sprintf("OS_VARIABLE_%d=/some/value/%d", i, i))
	}
	for i := 0; i < 12; i++ {
		own = append(own, fmt.Sprintf("HUB_PARAMETER_%d=value %d", i, i))
	}
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			Environ(osEnv, false, own)
		}
	})
	b.Run("base", func(b *testing.B) {
		base := NewEnvBase(osEnv, false)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			base.Environ(own)
		}
	})
}
