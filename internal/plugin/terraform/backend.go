package terraform

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// backendChanged is how terraform init says the module's backend
// configuration is not the one its working data was initialised with.
var backendChanged = []byte("Backend configuration changed")

// phraseWatcher passes output on and notes whether a phrase went by, also
// when it comes cut over two writes.
type phraseWatcher struct {
	next   io.Writer
	phrase []byte
	mu     sync.Mutex
	tail   []byte // the end of the last write, for a phrase cut by a write
	seen   bool
}

func (w *phraseWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	if !w.seen {
		joined := append(w.tail, p...)
		w.seen = bytes.Contains(joined, w.phrase)
		keep := min(len(joined), len(w.phrase)-1)
		w.tail = append(w.tail[:0], joined[len(joined)-keep:]...)
	}
	w.mu.Unlock()
	return w.next.Write(p)
}

// Seen reports whether the phrase went by.
func (w *phraseWatcher) Seen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// backendChangedError says what to do when terraform init refuses a changed
// backend configuration. terraform's own advice ("terraform init
// -reconfigure" in the module's folder) would init a working folder gantry
// does not use: its working data is in the instance's state folder.
func backendChangedError(dir, dataDir string, err error) error {
	return fmt.Errorf("terraform init: the module's backend configuration changed since this instance's last init (%w); "+
		"gantry keeps terraform's working data in %s, so run terraform's advice there: "+
		"cd %s && TF_DATA_DIR=%s terraform init -migrate-state (to move the state to the new backend) "+
		"or -reconfigure (to use the new backend as it is, leaving the old state where it was), then deploy again",
		err, dataDir, dir, dataDir)
}
