package cli

import (
	"bytes"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/gantry-dev/gantry/internal/ui"
)

// stderrStream is gantry's stderr. While the live display draws on the
// terminal that stderr also is, a line written to stderr where the cursor
// is would be drawn over by the next frame and leave a copy of the live
// area in the scrollback: the interrupt's message, a warning, -v logs. Then
// its lines go to the display, which prints them above the live area.
type stderrStream struct {
	w io.Writer

	mu   sync.Mutex
	live *ui.TTY // nil unless a live display is on stderr's terminal
	part []byte  // the start of a line not ended yet
}

// Write writes p to stderr, or its lines to the live display.
func (s *stderrStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		return s.w.Write(p)
	}
	s.part = append(s.part, p...)
	for {
		i := bytes.IndexByte(s.part, '\n')
		if i < 0 {
			break
		}
		// An empty line is left out: the one that parts a message from
		// the terminal's echo of ^C is not needed above the live area,
		// which is redrawn over the echo.
		if line := string(bytes.TrimSuffix(s.part[:i], []byte("\r"))); line != "" {
			s.live.Print(line)
		}
		s.part = s.part[i+1:]
	}
	return len(p), nil
}

// showOn sends stderr's lines to the live display tty when stderr is the
// terminal out, on which tty draws; nothing changes otherwise (stderr
// redirected to a file, or another terminal).
func (s *stderrStream) showOn(tty *ui.TTY, out *os.File) {
	f, ok := s.w.(*os.File)
	if !ok || !sameFile(f, out) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = tty
}

// liveDisplay is the live display stderr's lines go to; nil when none.
func (s *stderrStream) liveDisplay() *ui.TTY {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// detach writes to stderr again, after the live display stopped, with
// the start of a line the display was given no end of.
func (s *stderrStream) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		return
	}
	s.live = nil
	if len(s.part) > 0 {
		_, _ = s.w.Write(s.part)
		s.part = nil
	}
}

// sameFile reports whether a and b are the same open file (the same
// terminal device, whichever descriptors name it).
func sameFile(a, b *os.File) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(int(a.Fd()), &sa) != nil || unix.Fstat(int(b.Fd()), &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
