package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Bounds of the log a report keeps of one component: the first headLines
// and the last tailLines (what is between is counted, and gantry logs
// shows it), each line cut at lineBytes, and at most failingMax failing
// lines picked out.
const (
	headLines  = 1000
	tailLines  = 4000
	lineBytes  = 4096
	failingMax = 200
)

// Log is a component's log as a report keeps it. Lines are as the run
// logged them, "time text", already masked.
type Log struct {
	Lines []string `json:"lines"`
	// Cut is how many lines of a long log were left out, between its
	// first CutAt lines and the last ones.
	Cut   int `json:"cut,omitempty"`
	CutAt int `json:"cutAt,omitempty"`
	// Total is the number of lines of the whole log.
	Total int `json:"total"`
	// Failing are the lines that say something failed, with their numbers
	// in the whole log (from 1).
	Failing []LogLine `json:"failing,omitempty"`
}

// LogLine is a line of a log and its number, from 1.
type LogLine struct {
	N    int    `json:"n"`
	Text string `json:"t"`
}

// failing matches lines that tell of a failure: the run's own "<== step:
// failed" lines, and what tools print when they fail.
var failing = regexp.MustCompile(`(?i)(: failed \(|\berror\b|\berr:|\bfatal\b|\bpanic\b|\bfailed\b|\bfailure\b|exception|traceback|permission denied|access denied|connection refused|\bcannot\b|can't|unable to|no such file|timed out|exit (status|code) [1-9]|\*\*\* \[.*\] error)`)

// failingWords are in every line failing matches, lower-cased: most lines
// hold none, and are passed over without the regular expression.
var failingWords = []string{"fail", "err", "fatal", "panic", "exception", "traceback", "denied", "refused", "cannot", "can't", "unable", "no such", "timed out", "exit "}

// IsFailingLine reports whether a log line tells of a failure.
func IsFailingLine(line string) bool {
	lower := strings.ToLower(line)
	for _, w := range failingWords {
		if strings.Contains(lower, w) {
			return failing.MatchString(line)
		}
	}
	return false
}

// readLog reads a group's log file; nil when there is none.
func readLog(path string) (*Log, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the log %s: %w", path, err)
	}
	defer f.Close()
	size := 4096
	if fi, err := f.Stat(); err == nil {
		size = int(min(max(fi.Size()+1, 512), 64<<10))
	}
	l, err := scanLog(bufio.NewReaderSize(f, size))
	if err != nil {
		return nil, fmt.Errorf("read the log %s: %w", path, err)
	}
	return l, nil
}

// readLogs reads the logs of a run's components and groups into logs, a
// few files at a time: a run of a thousand components has a thousand logs, and
// opening files one after the other is what takes time.
func readLogs(dir string, groups []string, logs []*Log) error {
	const workers = 4
	errs := make([]error, len(groups))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				logs[i], errs[i] = readLog(filepath.Join(dir, groups[i]+".log"))
			}
		}()
	}
	for i := range groups {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// scanLog keeps the head and the tail of a log and picks out its failing
// lines.
func scanLog(br *bufio.Reader) (*Log, error) {
	var s logScan
	for {
		line, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		s.add(line)
	}
	return s.log(), nil
}

// logScan is a log as a report keeps it, line after line: its head, a ring
// of its tail, its failing lines.
type logScan struct {
	head    []string
	tail    []string // a ring of the last tailLines lines
	next    int      // where in the ring the oldest line is
	total   int
	failing []LogLine
}

// add takes the next line in, as readLine returns it.
func (s *logScan) add(line string) {
	s.total++
	if len(s.failing) < failingMax && IsFailingLine(line) {
		s.failing = append(s.failing, LogLine{N: s.total, Text: line})
	}
	switch {
	case s.total <= headLines:
		s.head = append(s.head, line)
	case len(s.tail) < tailLines:
		s.tail = append(s.tail, line)
	default:
		s.tail[s.next] = line
		s.next = (s.next + 1) % tailLines
	}
}

// log is the log so far.
func (s *logScan) log() *Log {
	l := &Log{Lines: make([]string, 0, len(s.head)+len(s.tail)), Total: s.total, Failing: slices.Clone(s.failing)}
	l.Lines = append(l.Lines, s.head...)
	if kept := len(s.head) + len(s.tail); kept < s.total {
		l.Cut, l.CutAt = s.total-kept, len(s.head)
	}
	l.Lines = append(l.Lines, s.tail[s.next:]...)
	l.Lines = append(l.Lines, s.tail[:s.next]...)
	return l
}

// LogCollector keeps the logs of a run as its report shows them while the
// run writes them (ui.RunLog.Tap): the report of a run that just ended need
// not read a thousand files back. It holds what the report will: at most
// the head and the tail of each log.
type LogCollector struct {
	mu    sync.Mutex
	scans map[string]*logScan
}

// NewLogCollector returns an empty collector.
func NewLogCollector() *LogCollector { return &LogCollector{scans: map[string]*logScan{}} }

// LogLine takes a line of a group's log as it is written to the file,
// without its newline: what reading the file back would give, line by line.
func (c *LogCollector) LogLine(group, line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.scans[group]
	if s == nil {
		s = &logScan{}
		c.scans[group] = s
	}
	for {
		one, rest, more := strings.Cut(line, "\n")
		s.add(cutLine(strings.TrimSuffix(one, "\r")))
		if !more {
			return
		}
		line = rest
	}
}

// log is a group's log; nil when nothing was written to it (it has no
// file).
func (c *LogCollector) log(group string) *Log {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.scans[group]; s != nil {
		return s.log()
	}
	return nil
}

// readLine reads one line without its end, cut at lineBytes; io.EOF once
// nothing is left.
func readLine(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF && b.Len() > 0 {
				break
			}
			return "", err
		}
		// One byte past the bound tells cutLine to cut.
		if room := lineBytes + 1 - b.Len(); len(chunk) > room {
			chunk = chunk[:max(room, 0)]
		}
		b.Write(chunk)
		if !isPrefix {
			break
		}
	}
	return cutLine(b.String()), nil
}

// cutLine cuts a line longer than lineBytes.
func cutLine(line string) string {
	if len(line) <= lineBytes {
		return line
	}
	// A cut may split a character.
	return strings.ToValidUTF8(line[:lineBytes], "") + " …"
}
