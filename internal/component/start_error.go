package component

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// startError is the error of a program that could not be started, said as
// a shell would say it when the kernel's answer misleads: a script whose
// #! line names an interpreter that is not there fails with "no such file
// or directory" although the script is there — a typo, or a carriage
// return left by Windows line endings (#!/bin/sh\r) — and a file that is
// neither a binary nor a script with a #! line with "exec format error".
// path is the file exec ran (found on PATH for a bare name), dir the
// working folder, whose absence also reads "no such file or directory".
func startError(program, path, dir string, err error) error {
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	switch {
	case errors.Is(err, syscall.ENOENT):
		if dir != "" {
			if _, serr := os.Stat(dir); serr != nil {
				return fmt.Errorf("start %s: its working folder %s is not there (%w)", program, dir, err)
			}
		}
		if line, ok := firstLine(path); ok && strings.HasPrefix(line, "#!") {
			fields := strings.Fields(strings.TrimPrefix(line, "#!"))
			if len(fields) > 0 {
				interp := fields[0]
				if strings.HasSuffix(line, "\r") {
					if len(fields) == 1 {
						interp += "\r" // the name the kernel looked for
					}
					return fmt.Errorf("start %s: its first line ends with a carriage return (Windows line endings), so its interpreter %q is not found: convert the file to Unix line endings (%w)", program, interp, err)
				}
				if _, serr := os.Stat(interp); serr != nil {
					return fmt.Errorf("start %s: the interpreter its first line names, %s, is not found (%w)", program, interp, err)
				}
			}
		}
	case errors.Is(err, syscall.ENOEXEC):
		return fmt.Errorf("start %s: it is neither a program this machine runs nor a script with a #! line naming its interpreter (#!/bin/sh) (%w)", program, err)
	}
	return fmt.Errorf("start %s: %w", program, err)
}

// firstLine is the first line of the file at path (at most 256 bytes of
// it, its carriage return kept), when it can be read.
func firstLine(path string) (string, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	buf := make([]byte, 256)
	n, err := io.ReadFull(f, buf)
	if n == 0 && err != nil {
		return "", false
	}
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	return string(line), true
}
