// Package atomicfile replaces files so that a reader, or a crash at any
// instant, sees either the old file or the new one, never a mix.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces the file at path with data: a temporary file in the same
// folder, with mode, renamed over the old one. With durable, the data is
// fsync'ed before the rename and the folder after it, so that the new file
// also survives a power loss.
func Write(path string, data []byte, mode os.FileMode, durable bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	err = tmp.Chmod(mode)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil && durable {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	if durable {
		if d, err := os.Open(dir); err == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return nil
}
