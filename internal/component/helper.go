package component

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
)

// HelperCommand runs this program again as one of its own helpers (the
// output keeper, a Temporal worker's reaper): name is its argument, which
// ps shows (gantry output-keeper …), and env the variable that marks it.
// The variable's value is a token of this start that the argument after
// name repeats: a marker copied into another environment (a dump of the
// helper's) makes no other gantry a helper (RunAsHelper).
func HelperCommand(self, name, env string) *exec.Cmd {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	cmd := exec.Command(self, name, token)
	cmd.Env = append(os.Environ(), env+"="+token)
	return cmd
}

// RunAsHelper makes this process the helper name when HelperCommand
// started it as that: env set, its arguments name and env's token, and
// ready true (what the helper was handed is there). It then runs run and
// exits with its status. env set otherwise is a mistake of whoever ran
// gantry: said, exit status 2, nothing run. Unset, it returns.
func RunAsHelper(name, env string, ready func() bool, run func() int) {
	token := os.Getenv(env)
	if token == "" {
		return
	}
	if len(os.Args) == 3 && os.Args[1] == name && os.Args[2] == token && ready() {
		os.Exit(run())
	}
	fmt.Fprintf(os.Stderr, "gantry: %s is set in the environment: it is internal to gantry (it marks gantry's %s, which gantry starts itself); unset it\n", env, name)
	os.Exit(2)
}
