package ui

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// RunLog writes one log per component (and per stack-level group) into the
// run's folder, each line with its time. Lines are buffered until the run
// goes idle (Idle): behind Async, the executor never waits for a file.
type RunLog struct {
	dir   string
	mu    sync.Mutex
	files map[string]*logFile
	// closed: Close ran; later lines are dropped (nothing would write
	// them out, and the report took the logs as they were).
	closed bool
	dirty  []*logFile // written to since the last flush
	err    error
	// labels holds back the start lines of steps whose labels name
	// values, until they say what they are.
	lmu    sync.Mutex
	labels stepLabels
	tap    LogTap
	// spare are the buffers of closed logs, for the next ones: a run of
	// 1,000 components would otherwise allocate 4 MiB of them.
	spare []*bufio.Writer
}

// A LogTap hears every line a RunLog writes, as it goes to the file
// (without its newline; a text with newlines is still one call).
type LogTap interface {
	LogLine(group, line string)
}

// Tap makes t hear every line written from now on: call it before the
// run starts.
func (l *RunLog) Tap(t LogTap) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tap = t
}

// logFile is one log, its lines buffered in w. It is a bare descriptor,
// not an *os.File: a regular file gains nothing from Go's poller, which
// os.OpenFile tries (five system calls) and os.File's close undoes.
type logFile struct {
	path  string
	fd    int
	w     *bufio.Writer
	dirty bool
	// last is the time of the last line written: a line's time never goes
	// back in its file (lines carry the time they were printed, notes the
	// time they were heard).
	last time.Time
}

// Write appends p to the file.
func (lf *logFile) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n, err := syscall.Write(lf.fd, p[written:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return written, &os.PathError{Op: "write", Path: lf.path, Err: err}
		}
		if n == 0 {
			return written, &os.PathError{Op: "write", Path: lf.path, Err: io.ErrShortWrite}
		}
		written += n
	}
	return written, nil
}

// close closes the file.
func (lf *logFile) close() error {
	err := syscall.Close(lf.fd)
	lf.fd = -1
	if err != nil {
		return &os.PathError{Op: "close", Path: lf.path, Err: err}
	}
	return nil
}

// openAppend opens a log for appending, creating it (mode 0600), closed on
// exec: components must not inherit the run's logs.
func openAppend(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CLOEXEC, 0o600)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// NewRunLog writes logs into dir, which it creates.
func NewRunLog(dir string) (*RunLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	return &RunLog{dir: dir, files: map[string]*logFile{}}, nil
}

// Dir is the run folder.
func (l *RunLog) Dir() string { return l.dir }

// Path is the log file of a component.
func (l *RunLog) Path(group string) string { return filepath.Join(l.dir, group+".log") }

// Group is the name of the log a step's lines go to (Path).
func Group(n *plan.Node) string { return groupOf(n) }

func (l *RunLog) write(group, text string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	lf, ok := l.files[group]
	if !ok {
		// Opened at its first line, so that a component's log exists once
		// it started (gantry logs, a crash); a line that could not open
		// it is lost, and the next one tries again.
		path := l.Path(group)
		fd, err := openAppend(path)
		if err != nil {
			l.keep(err)
			return
		}
		lf = &logFile{path: path, fd: fd}
		lf.w = l.writer(lf)
		l.files[group] = lf
	}
	if at.Before(lf.last) {
		at = lf.last
	}
	lf.last = at
	line := at.UTC().Format("2006-01-02T15:04:05.000Z") + " " + text
	_, _ = lf.w.WriteString(line)
	_ = lf.w.WriteByte('\n')
	if l.tap != nil {
		l.tap.LogLine(group, line)
	}
	if !lf.dirty {
		lf.dirty = true
		l.dirty = append(l.dirty, lf)
	}
}

// writer is a buffer for a log: a spare one if any (l.mu held).
func (l *RunLog) writer(f *logFile) *bufio.Writer {
	if n := len(l.spare); n > 0 {
		w := l.spare[n-1]
		l.spare = l.spare[:n-1]
		w.Reset(f)
		return w
	}
	return bufio.NewWriter(f)
}

// Idle writes the buffered lines: logs are read while a run goes on (and
// after a crash), so they are kept current, a burst at a time.
func (l *RunLog) Idle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.dirty {
		l.keep(d.w.Flush())
		d.dirty = false
	}
	l.dirty = l.dirty[:0]
}

// StepStarted logs the start of visible steps; one whose label names
// values once it says what they are.
func (l *RunLog) StepStarted(n *plan.Node, at time.Time) {
	if n.Hidden || n.Quiet {
		return
	}
	l.lmu.Lock()
	held := l.labels.hold(n, at)
	l.lmu.Unlock()
	if !held {
		l.started(n, n.Label, at)
	}
}

func (l *RunLog) started(n *plan.Node, label string, at time.Time) {
	l.write(groupOf(n), laned(n, "==> "+titled(n, label)), at)
}

// release logs the start line held back for n, if any, at the time n
// started.
func (l *RunLog) release(n *plan.Node) {
	l.lmu.Lock()
	at, held := l.labels.release(n)
	l.lmu.Unlock()
	if held {
		l.started(n, n.Label, at)
	}
}

// StepFinished logs how steps ended. A component's end closes its log: a
// run of 10,000 components would otherwise hold 10,000 descriptors, which
// every process start copies. A later line (a stack step of the same
// group) opens it again.
func (l *RunLog) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	if n.Settles() {
		defer l.closeGroup(groupOf(n))
	}
	l.release(n)
	l.lmu.Lock()
	label := l.labels.label(n)
	l.labels.done(n)
	l.lmu.Unlock()
	// A component --resume leaves alone has nothing to log (the events and
	// the summary say it was unchanged).
	if r.Cause == plan.CauseNotNeeded || r.Cause == plan.CauseUnchanged {
		return
	}
	// Bookkeeping steps log only their failures; quiet ones not even
	// their success.
	if n.Hidden && r.Status != plan.Failed || n.Quiet && r.Status == plan.OK {
		return
	}
	msg := StepEndLine(label, r.Status.String(), ended.Sub(started), r.Reason, r.Warning, r.Info)
	l.write(groupOf(n), laned(n, msg), ended)
}

// StepEndLine is the line a run's log says a step ended with, as gantry
// logs --follow says it from the events: "<== label: status (duration)",
// then why, and what on_fail let pass.
func StepEndLine(label, status string, d time.Duration, reason, warning, info string) string {
	msg := fmt.Sprintf("<== %s: %s (%s)", label, status, FormatDuration(d))
	if reason != "" {
		msg += ": " + reason
	}
	if warning != "" {
		msg += " (warning: " + warning + ")"
	}
	if info != "" {
		msg += " (info: " + info + ")"
	}
	return msg
}

// Log writes a line of output.
func (l *RunLog) Log(n *plan.Node, line string, at time.Time) {
	l.release(n)
	l.write(groupOf(n), laned(n, line), at)
}

// Note logs captured outputs (already masked), and the start of a step
// held back with its expanded label.
func (l *RunLog) Note(n *plan.Node, note plan.Note) {
	switch note.Kind {
	case plan.NoteOutput:
		l.write(groupOf(n), fmt.Sprintf("output %s = %s", note.Name, note.Value), note.Time())
	case plan.NoteLabel:
		l.lmu.Lock()
		l.labels.expand(n, note.Value)
		at, held := l.labels.release(n)
		l.lmu.Unlock()
		if held {
			l.started(n, note.Value, at)
		}
	}
}

// closeGroup writes what is buffered for a group and closes its file.
func (l *RunLog) closeGroup(group string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lf, ok := l.files[group]
	if !ok {
		return
	}
	l.keep(lf.w.Flush())
	l.keep(lf.close())
	delete(l.files, group)
	// Reset drops what a failed flush left, and its error (kept above).
	lf.w.Reset(nil)
	l.spare = append(l.spare, lf.w)
	if lf.dirty {
		// Idle must not flush a closed file.
		for i, d := range l.dirty {
			if d == lf {
				l.dirty = append(l.dirty[:i], l.dirty[i+1:]...)
				break
			}
		}
	}
}

// keep remembers the first error writing the logs met (l.mu held): Close
// returns it, so that nobody takes the lines it heard (Tap) for what the
// files hold.
func (l *RunLog) keep(err error) {
	if err != nil && l.err == nil {
		l.err = err
	}
}

// Close writes what is left and closes every log; the first error met
// writing any of them.
func (l *RunLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lf := range l.files {
		l.keep(lf.w.Flush())
		l.keep(lf.close())
	}
	l.files = map[string]*logFile{}
	l.closed = true
	return l.err
}

// Tail returns the last n lines of a component's log (after Close).
func (l *RunLog) Tail(group string, n int) []string {
	f, err := os.Open(l.Path(group))
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines
}
