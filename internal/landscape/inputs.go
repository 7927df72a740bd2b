package landscape

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/internal/component"
)

// Names under which a landscape component shows gantry what its deploy
// reads and makes, so that a component's fingerprint (--resume, and what a
// plan says changed) covers a landscape's inputs.
const (
	// InputsParameter is a parameter of each landscape component: a digest
	// of what its files are evaluated with besides its own folder (the
	// configuration, its effective component.yaml, its templates' folders,
	// its stubs, the crop's action script, its product's SPEC-VERSION).
	InputsParameter = "sow.inputs"
	// ExportsOutput is an output of each landscape component: a digest of
	// its export.yaml. A component importing it runs after it, so its
	// fingerprint changes when the exports do.
	ExportsOutput = "sow.exports"
)

// inputsDigest is the value of InputsParameter for a component.
func (l *Landscape) inputsDigest(c *Component) string {
	h := sha256.New()
	fmt.Fprintf(h, "config %d\n", len(l.Config))
	h.Write(l.Config)
	fmt.Fprintf(h, "meta %d\n", len(c.Meta))
	h.Write(c.Meta)
	fmt.Fprintf(h, "spec %q\n", c.Product.SpecVersion)
	for _, t := range c.Chain {
		sum := "unreadable"
		if d, err := component.DigestDir(t.Dir, nil); err == nil {
			sum = d.Sum
		}
		fmt.Fprintf(h, "template %s %s\n", t.Name, sum)
	}
	files := append(append([]string(nil), c.Stubs...), l.actionScripts(c)...)
	for _, f := range files {
		fmt.Fprintf(h, "file %s %s\n", f, fileDigest(f))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// fileDigest is the SHA-256 of a file's content, or why it has none.
func fileDigest(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxFile)); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// exportsDigest is the value of ExportsOutput after a deploy: the
// digest's first half, or why there is none.
func (w *work) exportsDigest() string {
	d := fileDigest(filepath.Join(w.export_(), exportFile))
	return d[:min(len(d), 32)]
}
