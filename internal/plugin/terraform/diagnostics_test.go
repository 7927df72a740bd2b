package terraform

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/component"
)

// BenchmarkDiagnostics: many short lines in one write cost in proportion
// to the bytes (a scan that copied the rest of the write for each line was
// quadratic: a MiB of empty lines took seconds).
func BenchmarkDiagnostics(b *testing.B) {
	data := bytes.Repeat([]byte("\n"), 1<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		d := &diagnostics{}
		_, _ = d.Write(data)
	}
}

func TestDiagnostics(t *testing.T) {
	exit1 := &component.ExitError{Args: []string{"/usr/bin/terraform", "apply", "-state=/x"}, Code: 1}
	tests := []struct {
		name   string
		writes []string
		err    error
		want   string
	}{
		{
			name:   "summary and place",
			writes: []string{"\nError: Invalid multi-line string\n\n  on main.tf line 3, in resource \"terraform_data\" \"r\":\n   3:   input = \"x\n"},
			err:    exit1,
			want:   "Error: Invalid multi-line string, on main.tf line 3 (exit status 1)",
		},
		{
			name:   "place after a with line",
			writes: []string{"Error: local-exec provisioner error\n\n  with terraform_data.r,\n  on main.tf line 6, in resource \"terraform_data\" \"r\":\n"},
			err:    exit1,
			want:   "Error: local-exec provisioner error, on main.tf line 6 (exit status 1)",
		},
		{
			name:   "cut over writes",
			writes: []string{"Err", "or: Unsupported argu", "ment\n", "\n  on vars.tf li", "ne 12:\n"},
			err:    exit1,
			want:   "Error: Unsupported argument, on vars.tf line 12 (exit status 1)",
		},
		{
			name:   "framed",
			writes: []string{"╷\n│ Error: Failed to query available provider packages\n│ \n│ Could not retrieve the list\n╵\n"},
			err:    exit1,
			want:   "Error: Failed to query available provider packages (exit status 1)",
		},
		{
			name:   "more errors",
			writes: []string{"Error: one\n\n  on a.tf line 1:\nError: two\nError: three\n"},
			err:    exit1,
			want:   "Error: one, on a.tf line 1 (and 2 more errors; exit status 1)",
		},
		{
			name:   "one more",
			writes: []string{"Error: one\nError: two\n"},
			err:    exit1,
			want:   "Error: one (and 1 more error; exit status 1)",
		},
		{
			name:   "a place far after is not its place",
			writes: []string{"Error: one\n\na\nb\nc\nd\n  on a.tf line 1:\n"},
			err:    exit1,
			want:   "Error: one (exit status 1)",
		},
		{
			name:   "no error line: the error as it was",
			writes: []string{"something went wrong\n"},
			err:    exit1,
			want:   "/usr/bin/terraform apply -state=/x exited with status 1",
		},
		{
			name:   "an error line without its newline yet",
			writes: []string{"Error: cut short"},
			err:    exit1,
			want:   "/usr/bin/terraform apply -state=/x exited with status 1",
		},
		{
			name:   "killed: the process error kept whole",
			writes: []string{"Error: one\n"},
			err:    &component.ExitError{Args: []string{"terraform"}, Code: -1, Signal: "SIGKILL"},
			want:   "Error: one (terraform was killed by SIGKILL)",
		},
		{
			name:   "success says nothing",
			writes: []string{"Error: a warning-like line\n"},
			err:    nil,
			want:   "",
		},
		{
			name:   "a long line is quoted whole",
			writes: []string{"Error: " + strings.Repeat("x", 2000) + "\n"},
			err:    exit1,
			want:   "Error: " + strings.Repeat("x", 2000) + " (exit status 1)",
		},
		{
			// A cut would leave the start of a secret the masker, which
			// sees the reason, could not know for one.
			name:   "a line over the bound is not quoted",
			writes: []string{"Error: " + strings.Repeat("a", maxDiagnosticLine-12) + "hunter2-secret-value\n", "\n  on main.tf line 1:\n"},
			err:    exit1,
			want:   "Error: (a line of over 8 KiB: the log has it), on main.tf line 1 (exit status 1)",
		},
		{
			name:   "a line over the bound in many writes",
			writes: []string{"Error: ", strings.Repeat("€", maxDiagnosticLine), strings.Repeat("€", 10), "\nError: two\n"},
			err:    exit1,
			want:   "Error: (a line of over 8 KiB: the log has it) (and 1 more error; exit status 1)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &diagnostics{next: &out}
			for _, w := range tt.writes {
				if n, err := d.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if out.String() != strings.Join(tt.writes, "") {
				t.Errorf("passed on %q", out.String())
			}
			err := d.explain(tt.err)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("error\n got %q\nwant %q", got, tt.want)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Error("the process error is not wrapped")
			}
		})
	}
}
