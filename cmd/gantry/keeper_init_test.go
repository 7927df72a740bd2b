package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/gantry-dev/gantry/internal/component/keeper"
)

// TestKeeperStartsBeforeTheSDKs: the output keeper, which every run
// starts, becomes the keeper from its package's initialiser before the
// heavy dependencies' initialisers ran (they took 60 of its 80 ms of CPU),
// and before most of the others: a new import of the keeper's (or of its
// helper package's) that sorts, or waits for packages that sort, after
// them would make this fail (os/exec had 38 % of gantry's initialisers run
// first, golang.org/x/sys/unix 20 %; today 17 %). It runs the test binary
// (testscript's "gantry"), which links the same packages, as gantry
// starts its keeper: the socket as descriptor 3, then a goodbye, which
// ends it.
func TestKeeperStartsBeforeTheSDKs(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "gantry"), os.NewFile(uintptr(fds[1]), "keeper")
	defer mine.Close()
	const token = "0123456789abcdef"
	cmd := exec.Command("gantry", keeper.Arg, token)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", keeper.Env+"="+token)
	cmd.ExtraFiles = []*os.File{theirs}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	if _, err := mine.Write([]byte{keeper.MsgBye}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the keeper: %v\n%s", err, out.String())
	}
	inits := countInits(out.String())
	all := exec.Command("gantry", "version")
	all.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	allOut, err := all.CombinedOutput()
	if err != nil {
		t.Fatalf("gantry version: %v\n%s", err, allOut)
	}
	if total := countInits(string(allOut)); inits == 0 || inits > total/5 {
		t.Errorf("%d of gantry's %d initialisers ran before the keeper started, at most a fifth may:\n%s", inits, total, out.String())
	}
	for _, sdk := range []string{
		"github.com/santhosh-tekuri/jsonschema/v6",
		"k8s.io/client-go/kubernetes/scheme",
		"k8s.io/apimachinery/pkg/runtime",
		"go.temporal.io/api/workflowservice/v1",
		"google.golang.org/protobuf/reflect/protoregistry",
		"github.com/google/cel-go/cel",
		"github.com/gantry-dev/gantry/internal/component",
	} {
		if strings.Contains(out.String(), "init "+sdk+" @") {
			t.Errorf("%s was initialised before the keeper started (%d initialisers in all):\n%s", sdk, inits, out.String())
		}
	}
}

// countInits counts the initialisers an inittrace output names.
func countInits(trace string) int {
	n := 0
	for _, line := range strings.Split(trace, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "init" {
			n++
		}
	}
	return n
}

// TestKeeperImportsStayLight: the keeper's package imports the standard
// library and gantry's two leaves only, and not os/exec or crypto/rand
// (each waits for path/filepath, which sorts after most dependencies):
// what TestKeeperStartsBeforeTheSDKs measures, said of the imports, so that
// an import that costs a few initialisers fails too.
func TestKeeperImportsStayLight(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/gantry-dev/gantry/internal/component/keeper").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	ours := map[string]bool{
		"github.com/gantry-dev/gantry/internal/component/keeper": true,
		"github.com/gantry-dev/gantry/internal/component/helper": true,
		"github.com/gantry-dev/gantry/internal/procstat":         true,
	}
	for _, dep := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(dep, "/")
		switch {
		case ours[dep]:
		case strings.Contains(first, "."):
			t.Errorf("the keeper imports %s: the standard library only", dep)
		case dep == "os/exec" || dep == "crypto/rand" || dep == "path/filepath":
			t.Errorf("the keeper imports %s, which is initialised after most of gantry's dependencies", dep)
		}
	}
}
