package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// errPromptInterrupted is what readSecret returns when an interrupt
// (Ctrl-C, Ctrl-\, SIGTERM, SIGHUP) came while it read.
var errPromptInterrupted = errors.New("interrupted")

// readSecret prints a prompt and reads a line from the terminal fd without
// echo. Echo goes off before the prompt is printed: an answer typed or
// pasted as soon as the prompt shows must not reach the screen, which it did
// when echo went off only after the prompt (term.ReadPassword).
//
// An interrupt while it reads ends the read with errPromptInterrupted and
// the terminal as it was: left to its default action, Ctrl-C (or Ctrl-\,
// SIGQUIT, with a goroutine dump) killed gantry with the terminal's echo
// off, for a shell that does not restore it.
func readSecret(fd int, out io.Writer, prompt string) ([]byte, error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, fmt.Errorf("read the terminal's settings: %w", err)
	}
	wake, stop, err := interruptPipe()
	if err != nil {
		return nil, err
	}
	defer stop()
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return nil, fmt.Errorf("turn the terminal's echo off: %w", err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	fmt.Fprint(out, prompt)
	var line []byte
	var b [1]byte
	for {
		if err := waitReadable(fd, wake); err != nil {
			return nil, err
		}
		n, err := unix.Read(fd, b[:])
		if n == 1 {
			switch b[0] {
			case '\n':
				return line, nil
			case '\r':
				continue
			}
			if len(line) >= 64<<10 {
				return nil, errors.New("the answer is longer than 64 KiB")
			}
			line = append(line, b[0])
			continue
		}
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			return nil, io.EOF
		}
		return line, nil
	}
}

// interruptPipe catches the interrupts (SIGINT, SIGQUIT, SIGTERM, SIGHUP) until stop
// is called: each makes the returned descriptor readable.
func interruptPipe() (wake int, stop func(), err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return 0, nil, fmt.Errorf("read the answer: %w", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGHUP)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		select {
		case <-sigs:
			_, _ = unix.Write(p[1], []byte{1})
		case <-done:
		}
	}()
	return p[0], func() {
		signal.Stop(sigs)
		close(done)
		<-ended
		unix.Close(p[0])
		unix.Close(p[1])
	}, nil
}

// waitReadable waits until fd has something to read, or wake does (an
// interrupt came: errPromptInterrupted).
func waitReadable(fd, wake int) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read the answer: %w", err)
		}
		if fds[1].Revents != 0 {
			return errPromptInterrupted
		}
		if fds[0].Revents != 0 {
			return nil
		}
	}
}
