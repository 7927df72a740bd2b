package landscape

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/atomicfile"
)

// recordView is sow's records of a landscape (its gen/, state/ and
// export/ folders) as a plan read them. The plan depends on them (an
// import's exports shape a plugin list, a state.info that is not
// "deployed" deploys a component again, plugins.json names the vanished
// instances, SPEC-VERSION the migrations), and a run changes them as it
// goes: a worker that rebuilds the plan of a run under way
// (docs/temporal.md) must read them as the client's plan did, not as the
// run left them since. The client's view records each record the first
// time it is read; a worker's replays them. The steps read the folder:
// only the plan reads through a view.
type recordView struct {
	root   string
	replay bool // answer from files; what they lack is read from the folder

	mu    sync.Mutex
	files map[string]*recordFile // by slash path below root
}

// recordFile is what reading a record gave: its content, or that it is a
// folder, or the error.
type recordFile struct {
	Data    []byte `json:"data,omitempty"`
	File    bool   `json:"file,omitempty"` // a regular file
	Dir     bool   `json:"dir,omitempty"`
	Missing bool   `json:"missing,omitempty"`
	Err     string `json:"err,omitempty"` // why Data could not be read
}

// recordFolders are the folders of sow's records below a landscape's root.
var recordFolders = []string{"gen", "state", "export"}

// newRecordView is the view a landscape's plan reads its records through:
// encoded, the records a client's plan read (encode), replayed; nil, the
// records read from the folder and kept.
func newRecordView(root string, encoded []byte) (*recordView, error) {
	v := &recordView{root: root, files: map[string]*recordFile{}}
	if encoded == nil {
		return v, nil
	}
	if err := json.Unmarshal(encoded, &v.files); err != nil {
		return nil, fmt.Errorf("read the run's view of sow's records: %w", err)
	}
	v.replay = true
	return v, nil
}

// encode is the records the plan read, for a worker's plan (Options.Records).
func (v *recordView) encode() ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return json.Marshal(v.files)
}

// key is p's name in the view, false when p is none of sow's records.
func (v *recordView) key(p string) (string, bool) {
	if v == nil {
		return "", false
	}
	r, err := filepath.Rel(v.root, p)
	if err != nil || !filepath.IsLocal(r) {
		return "", false
	}
	r = filepath.ToSlash(r)
	for _, f := range recordFolders {
		if r == f || strings.HasPrefix(r, f+"/") {
			return r, true
		}
	}
	return "", false
}

// get is the record at p as the view has it, read from the folder (and
// kept) the first time; nil when p is none of sow's records or the view is
// nil: read it from the folder.
func (v *recordView) get(p string) *recordFile {
	k, ok := v.key(p)
	if !ok {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if f := v.files[k]; f != nil {
		return f
	}
	f := &recordFile{}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		f.Missing = true
	case err == nil && fi.IsDir():
		f.Dir = true
	default:
		f.File = err == nil && fi.Mode().IsRegular()
		if f.Data, err = readFile(p); err != nil {
			f.Err = err.Error()
		}
	}
	if !v.replay {
		v.files[k] = f
	}
	return f
}

// readFile is readFile of p as the view has it.
func (v *recordView) readFile(p string) ([]byte, error) {
	f := v.get(p)
	switch {
	case f == nil:
		return readFile(p)
	case f.Missing:
		return nil, &os.PathError{Op: "stat", Path: p, Err: os.ErrNotExist}
	case f.Dir:
		return nil, errors.New("not a regular file")
	case f.Err != "":
		return nil, errors.New(f.Err)
	}
	return append([]byte(nil), f.Data...), nil
}

// isFile is isFile of p as the view has it.
func (v *recordView) isFile(p string) bool {
	f := v.get(p)
	if f == nil {
		return isFile(p)
	}
	return f.File
}

// exists is exists of p as the view has it.
func (v *recordView) exists(p string) bool {
	f := v.get(p)
	if f == nil {
		return exists(p)
	}
	return !f.Missing
}

// RunMarkFile is the file, below a landscape's folder, that names the run
// a client started from that folder on remote workers (MarkRun).
const RunMarkFile = ".gantry/landscape-run"

// MarkRun writes the id of a run about to start on remote workers into the
// landscape's folder at root. sow's records are the folder's own (a
// component imports the exports in its export/, keeps its &state in its
// state/): a worker finds the mark only in that folder itself — on the
// same machine, or on storage the machines share — and refuses the run's
// steps in any other (RunMarked), a copy of it on another machine
// included, where a component would import stale exports.
func MarkRun(root, runID string) error {
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(RunMarkFile)), 0o755); err != nil {
		return fmt.Errorf("mark the landscape's folder with the run: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(root, RunMarkFile), []byte(runID+"\n"), 0o644, true); err != nil {
		return fmt.Errorf("mark the landscape's folder with the run: %w", err)
	}
	return nil
}

// RunMarked reports whether the landscape's folder at root is the one the
// run was started from (MarkRun).
func RunMarked(root, runID string) bool {
	data, err := os.ReadFile(filepath.Join(root, RunMarkFile))
	return err == nil && strings.TrimSpace(string(data)) == runID
}
