package ui

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// RemaskRunFolder masks again, with mask, the texts of a run's folder that
// come from its steps: each log line's text (not its time) and the text
// fields of its events (a log line, a reason, a warning, an info, a label). A line
// written before the run learned a secret (a token printed before the
// Outputs: block that says it is secret) holds it in clear, and gantry
// logs, gantry report and anyone reading the folder later must not see it.
// Nothing else is touched: ids, names, times and numbers stay as they were
// (a component called like a secret's value keeps its name there, as it
// does while the run goes on). A file whose masking changes nothing is left
// as it is; one that changes is replaced whole (a temporary file renamed
// over it).
func RemaskRunFolder(dir string, mask func(string) string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("mask the run's folder again: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		var line func(string) string
		switch {
		case strings.HasSuffix(e.Name(), ".log"):
			line = func(l string) string { return remaskLogLine(l, mask) }
		case e.Name() == "events.jsonl":
			line = func(l string) string { return remaskEventLine(l, mask) }
		default:
			continue
		}
		if err := remaskFile(filepath.Join(dir, e.Name()), line); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// remaskLogLine masks a log line's text, after its time (RunLog.write).
func remaskLogLine(l string, mask func(string) string) string {
	at, text, ok := strings.Cut(l, " ")
	if !ok || len(at) != len("2006-01-02T15:04:05.000Z") || !strings.HasSuffix(at, "Z") {
		// A piece of a long line, or a line of a process the keeper
		// drained: text throughout.
		return mask(l)
	}
	return at + " " + mask(text)
}

// eventTexts are the fields of an event that hold what steps said.
var eventTexts = []string{`"line":`, `"reason":`, `"warning":`, `"info":`, `"label":`}

// remaskEventLine masks the text fields of one event, leaving the rest of
// its bytes as they were.
func remaskEventLine(l string, mask func(string) string) string {
	for _, key := range eventTexts {
		i := strings.Index(l, key)
		if i < 0 {
			continue
		}
		start := i + len(key)
		dec := json.NewDecoder(strings.NewReader(l[start:]))
		var v string
		if dec.Decode(&v) != nil {
			continue
		}
		end := start + int(dec.InputOffset())
		m := mask(v)
		if m == v {
			continue
		}
		enc, err := json.Marshal(m)
		if err != nil {
			continue
		}
		l = l[:start] + string(enc) + l[end:]
	}
	return l
}

// remaskFile rewrites the file at path with line applied to each line.
func remaskFile(path string, line func(string) string) (err error) {
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
		l, rerr := r.ReadString('\n')
		if l != "" {
			text, nl := strings.CutSuffix(l, "\n")
			if m := line(text); m != text {
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
