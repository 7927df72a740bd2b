package ui

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// RemaskRunFolder masks again, with mask, the text files of a run's folder
// (its logs, events, summary): a line written before the run learned a
// secret (a token printed before the Outputs: block that says it is
// secret) holds it in clear, and gantry logs, gantry report and anyone
// reading the folder later must not see it. A file whose masking changes
// nothing is left as it is; one that changes is replaced whole (a
// temporary file renamed over it). The report is not touched: it is
// written after, from what the run heard, masked the same way.
func RemaskRunFolder(dir string, mask func(string) string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("mask the run's folder again: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "report.html" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := remaskFile(filepath.Join(dir, e.Name()), mask); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// remaskFile masks the file at path line by line.
func remaskFile(path string, mask func(string) string) (err error) {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".remask-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(tmp, 64<<10)
	changed := false
	for {
		line, rerr := r.ReadString('\n')
		if line != "" {
			text, nl := strings.CutSuffix(line, "\n")
			if m := mask(text); m != text {
				text, changed = m, true
			}
			if _, err := w.WriteString(text); err != nil {
				return err
			}
			if nl {
				if err := w.WriteByte('\n'); err != nil {
					return err
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if !changed {
		tmp.Close()
		return os.Remove(tmp.Name())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
