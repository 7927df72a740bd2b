package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
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
func (s *stderrStream) Write(p []byte) (int, error) { return s.write(p, (*ui.TTY).Print) }

// logs is stderr for -v's debug logs: on the live display they wait while
// a step asks something (ui.TTY.PrintLog), where a warning does not.
func (s *stderrStream) logs() io.Writer { return logStream{s} }

type logStream struct{ s *stderrStream }

func (l logStream) Write(p []byte) (int, error) { return l.s.write(p, (*ui.TTY).PrintLog) }

// write writes p to stderr, or gives its lines to print of the live display.
func (s *stderrStream) write(p []byte, print func(*ui.TTY, ...string)) (int, error) {
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
			print(s.live, line)
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

// levelSplit sends the records below warnings (-v's debug and info logs)
// to low and the others to high: on the live display the former wait
// while a step asks something, and warnings and errors do not.
type levelSplit struct{ low, high slog.Handler }

func (h levelSplit) pick(l slog.Level) slog.Handler {
	if l < slog.LevelWarn {
		return h.low
	}
	return h.high
}

// Enabled reports whether the handler for level l handles it.
func (h levelSplit) Enabled(ctx context.Context, l slog.Level) bool {
	return h.pick(l).Enabled(ctx, l)
}

// Handle hands r to the handler for its level.
func (h levelSplit) Handle(ctx context.Context, r slog.Record) error {
	return h.pick(r.Level).Handle(ctx, r)
}

// WithAttrs adds attrs to both handlers.
func (h levelSplit) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelSplit{h.low.WithAttrs(attrs), h.high.WithAttrs(attrs)}
}

// WithGroup opens the group in both handlers.
func (h levelSplit) WithGroup(name string) slog.Handler {
	return levelSplit{h.low.WithGroup(name), h.high.WithGroup(name)}
}
