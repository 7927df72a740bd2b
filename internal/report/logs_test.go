package report

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
)

func TestIsFailingLine(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"2026-01-01T00:00:00.000Z <== deploy db: failed (3s): exit status 2", true},
		{"ERROR: connection refused", true},
		{"Error: timed out waiting for the condition", true},
		{"make: *** [Makefile:6: deploy] Error 3", true},
		{"panic: runtime error: index out of range", true},
		{"bash: ./deploy: Permission denied", true},
		{"cat: /etc/x: No such file or directory", true},
		{"Traceback (most recent call last):", true},
		{"process exit code 1", true},
		{"<== deploy db: ok (3s)", false},
		{"errors: 0", false},
		{"terror of the deep", false},
		{"exit code 0", false},
		{"deployment ready", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsFailingLine(tt.line); got != tt.want {
			t.Errorf("IsFailingLine(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestScanLog(t *testing.T) {
	lines := func(n int, failAt ...int) string {
		var b strings.Builder
		fails := map[int]bool{}
		for _, f := range failAt {
			fails[f] = true
		}
		for i := 1; i <= n; i++ {
			if fails[i] {
				fmt.Fprintf(&b, "line %d: ERROR something broke\n", i)
			} else {
				fmt.Fprintf(&b, "line %d\n", i)
			}
		}
		return b.String()
	}
	tests := []struct {
		name              string
		text              string
		kept, cut, total  int
		first, last       string
		failing           []int
		lastLineUnchanged bool
	}{
		{name: "empty", text: "", kept: 0, total: 0},
		{name: "a short log is kept whole", text: lines(3, 2), kept: 3, total: 3, first: "line 1", last: "line 3", failing: []int{2}},
		{name: "no final newline", text: "a\nb", kept: 2, total: 2, first: "a", last: "b"},
		{name: "a long log keeps its head and tail", text: lines(6000, 10, 3000, 5999), kept: headLines + tailLines, cut: 1000, total: 6000,
			first: "line 1", last: "line 6000", failing: []int{10, 3000, 5999}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := scanLog(bufio.NewReader(strings.NewReader(tt.text)))
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Lines) != tt.kept || l.Cut != tt.cut || l.Total != tt.total {
				t.Fatalf("kept %d, cut %d, total %d; want %d, %d, %d", len(l.Lines), l.Cut, l.Total, tt.kept, tt.cut, tt.total)
			}
			if tt.kept > 0 && (l.Lines[0] != tt.first || l.Lines[len(l.Lines)-1] != tt.last) {
				t.Errorf("first %q last %q, want %q and %q", l.Lines[0], l.Lines[len(l.Lines)-1], tt.first, tt.last)
			}
			if tt.cut > 0 && (l.CutAt != headLines || l.Lines[headLines] != fmt.Sprintf("line %d", headLines+tt.cut+1)) {
				t.Errorf("cut at %d, line after the cut %q", l.CutAt, l.Lines[headLines])
			}
			var got []int
			for _, f := range l.Failing {
				got = append(got, f.N)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.failing) && !(len(got) == 0 && len(tt.failing) == 0) {
				t.Errorf("failing lines %v, want %v", got, tt.failing)
			}
		})
	}
}

// TestScanLogCutsLongLines: a line past lineBytes is cut, marked, and
// never splits a character.
func TestScanLogCutsLongLines(t *testing.T) {
	long := strings.Repeat("é", lineBytes) // two bytes each
	l, err := scanLog(bufio.NewReaderSize(strings.NewReader(long+"\nnext\n"), 16))
	if err != nil {
		t.Fatal(err)
	}
	if l.Total != 2 || l.Lines[1] != "next" {
		t.Fatalf("lines %d, second %q", l.Total, l.Lines[1])
	}
	first := l.Lines[0]
	if !strings.HasSuffix(first, " …") || len(first) > lineBytes+len(" …") || !strings.HasPrefix(first, "éé") {
		t.Errorf("the long line became %d bytes ending %q", len(first), first[len(first)-8:])
	}
	if strings.ContainsRune(first, '\uFFFD') {
		t.Error("the cut split a character")
	}
}
