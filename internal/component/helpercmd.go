package component

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
)

// HelperCommand runs this program (self) again as the helper name: name is its
// argument, which ps shows (gantry output-keeper …), and env the variable
// that marks it. The variable's value is a token of this start that the
// argument after name repeats: a marker copied into another environment (a
// dump of the helper's) makes no other gantry a helper (helper.RunAs).
func HelperCommand(self, name, env string) *exec.Cmd {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	cmd := exec.Command(self, name, token)
	cmd.Env = append(os.Environ(), env+"="+token)
	return cmd
}
