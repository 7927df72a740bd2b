package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("kind: stack\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		limit   int64
		want    string // content, when problem is ""
		problem string
	}{
		{"regular file", small, 100, "kind: stack\n", ""},
		{"symbolic link to a file", link, 100, "kind: stack\n", ""},
		{"exactly the limit", small, 12, "kind: stack\n", ""},
		{"over the limit", small, 11, "", "12 bytes, more than the limit of 11 bytes for this input"},
		{"directory", dir, 100, "", "is a directory, not a file"},
		{"fifo is never opened", fifo, 100, "", "is a named pipe (FIFO), not a regular file"},
		{"device that never ends", "/dev/zero", 100, "", "is a device, not a regular file"},
		{"missing", filepath.Join(dir, "none"), 100, "", "not found"},
		{"symbolic link loop", loop, 100, "", "symbolic link loop (a link that leads back to itself)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(tt.path, tt.limit)
			if tt.problem == "" {
				if err != nil || string(got) != tt.want {
					t.Fatalf("Read = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Read = %q, want an error %q", got, tt.problem)
			}
			if p := Problem(err); p != tt.problem {
				t.Fatalf("Problem = %q, want %q", p, tt.problem)
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Fatalf("error %q does not name %s", err, tt.path)
			}
		})
	}
}

func TestProblemOfOtherErrors(t *testing.T) {
	if got := Problem(&os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}); got != "permission denied" {
		t.Fatalf("Problem(EACCES) = %q", got)
	}
	if got := Problem(errors.New("boom")); got != "boom" {
		t.Fatalf("Problem(boom) = %q", got)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{12: "12 bytes", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 20: "64 MiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
