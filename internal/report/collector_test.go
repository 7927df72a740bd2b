package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/ui"
)

// heardAndRead writes texts to groups through a RunLog tapped by a
// LogCollector, and returns the logs as the collector heard them and as
// the files read back give them.
func heardAndRead(t testing.TB, groups []string, texts map[string][]string) (heard, read []*Log) {
	dir := t.TempDir()
	rl, err := ui.NewRunLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := NewLogCollector()
	rl.Tap(c)
	for _, g := range groups {
		n := &plan.Node{ID: g + "/deploy", Group: g}
		for _, text := range texts[g] {
			rl.Log(n, text, time.Now())
		}
	}
	if err := rl.Close(); err != nil {
		t.Fatal(err)
	}
	read = make([]*Log, len(groups))
	if err := readLogs(dir, groups, read); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		heard = append(heard, c.log(g))
	}
	return heard, read
}

// TestLogCollector: the logs a run's report takes from what it heard are
// the logs reading the files back gives.
func TestLogCollector(t *testing.T) {
	many := func(n int, every int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			if every > 0 && i%every == 0 {
				out = append(out, fmt.Sprintf("line %d: error: it failed", i))
				continue
			}
			out = append(out, fmt.Sprintf("line %d", i))
		}
		return out
	}
	long := strings.Repeat("x", lineBytes-30) + "é€😀" + strings.Repeat("y", 100)
	tests := []struct {
		name  string
		texts []string
	}{
		{"short", []string{"hello", "world"}},
		{"empty lines", []string{"", "", "x"}},
		{"texts with newlines", []string{"a\nb", "c\n", "\nd", "e\r\nf\r\n", "g\rh"}},
		{"carriage returns", []string{"a\r", "\r", "b\r\r"}},
		{"a long line cut inside a character", []string{long, long + "\n" + long, "after"}},
		{"as long as the bound", []string{strings.Repeat("z", lineBytes-25), strings.Repeat("z", lineBytes-24), strings.Repeat("z", lineBytes-23)}},
		{"invalid UTF-8", []string{"\xff\xfe", strings.Repeat("\xff", lineBytes+10)}},
		{"head and tail", many(headLines+tailLines+500, 0)},
		{"exactly kept", many(headLines+tailLines-1, 0)},
		{"many failing lines", many(3*failingMax, 2)},
		{"nothing", nil},
	}
	var groups []string
	texts := map[string][]string{}
	for i, tt := range tests {
		g := fmt.Sprintf("c%02d", i)
		groups = append(groups, g)
		texts[g] = tt.texts
	}
	heard, read := heardAndRead(t, groups, texts)
	for i, tt := range tests {
		if tt.texts == nil && (heard[i] != nil || read[i] != nil) {
			t.Errorf("%s: a group never written has a log: heard %v, read %v", tt.name, heard[i], read[i])
		}
		if diff := cmp.Diff(read[i], heard[i]); diff != "" {
			t.Errorf("%s: heard differs from read (-read +heard):\n%s", tt.name, diff)
		}
	}
}

// FuzzLogCollector: any text logged is heard as reading the file back
// gives it.
func FuzzLogCollector(f *testing.F) {
	f.Add("hello", "a\r\nb\rc\n", 3)
	f.Add("", "\n\n", 1)
	f.Add(strings.Repeat("é", lineBytes), "x", 2)
	f.Fuzz(func(t *testing.T, a, b string, repeat int) {
		texts := []string{a, b}
		for i := 0; i < repeat%8; i++ {
			texts = append(texts, a+b)
		}
		heard, read := heardAndRead(t, []string{"c"}, map[string][]string{"c": texts})
		if diff := cmp.Diff(read[0], heard[0]); diff != "" {
			t.Errorf("heard differs from read (-read +heard):\n%s", diff)
		}
	})
}
