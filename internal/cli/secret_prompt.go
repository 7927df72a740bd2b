package cli

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// readSecret prints a prompt and reads a line from the terminal fd without
// echo. Echo goes off before the prompt is printed: an answer typed or
// pasted as soon as the prompt shows must not reach the screen, which it did
// when echo went off only after the prompt (term.ReadPassword).
func readSecret(fd int, out io.Writer, prompt string) ([]byte, error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, fmt.Errorf("read the terminal's settings: %w", err)
	}
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
		if errors.Is(err, unix.EINTR) {
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
