package component

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunSaysWhyAScriptDoesNotStart: the kernel's "no such file or
// directory" for a script that is there, and "exec format error", are said
// as what they mean.
func TestRunSaysWhyAScriptDoesNotStart(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"interpreter not there", "#!/bin/nosuchshell\necho hi\n", "the interpreter its first line names, /bin/nosuchshell, is not found"},
		{"Windows line endings", "#!/bin/sh\r\necho hi\r\n", `its first line ends with a carriage return (Windows line endings), so its interpreter "/bin/sh\r" is not found`},
		{"no #! line", "echo hi\n", "neither a program this machine runs nor a script with a #! line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "deploy.sh")
			if err := os.WriteFile(script, []byte(tt.content), 0o755); err != nil {
				t.Fatal(err)
			}
			err := Run(context.Background(), Process{Args: []string{script}, Dir: dir})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	// A working folder that is not there is said as such, not blamed on
	// the script's interpreter.
	dir := t.TempDir()
	script := filepath.Join(dir, "deploy.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone")
	err := Run(context.Background(), Process{Args: []string{script}, Dir: gone})
	if err == nil || !strings.Contains(err.Error(), "its working folder "+gone+" is not there") {
		t.Fatalf("missing folder: got %v", err)
	}
	// A program found on PATH is read where PATH found it.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "gantry-start-error-tool"), []byte("#!/bin/nosuchshell\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	err = Run(context.Background(), Process{Args: []string{"gantry-start-error-tool"}, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "the interpreter its first line names, /bin/nosuchshell, is not found") {
		t.Fatalf("program on PATH: got %v", err)
	}
	// A program that is not there is said as before.
	err = Run(context.Background(), Process{Args: []string{filepath.Join(t.TempDir(), "gone")}})
	if err == nil || !strings.Contains(err.Error(), "no such file or directory") || strings.Contains(err.Error(), "interpreter") {
		t.Fatalf("got %v", err)
	}
}
