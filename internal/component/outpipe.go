package component

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// outPipe carries a process's output to a writer that is not a file: the
// child writes into the pipe, and a copier of a pool kept between
// processes (copiers) reads it into the writer. os/exec did the same with
// a goroutine per stream and process, whose stack grew anew each time,
// and with a pipe whose both ends it registered with the poller and made
// non-blocking; here only the end this process reads is.
type outPipe struct {
	r, w *os.File
	to   io.Writer
	// done receives how the copy ended: nil at the end of the output, else
	// the error reading or writing.
	done chan error
	// keeper holds the pipe too (Keeper), as keptID; nil when none does.
	keeper *Keeper
	keptID uint64
}

// newOutPipe makes the pipe of a process's output to to.
func newOutPipe(to io.Writer) (*outPipe, error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	// The reading end is this process's, read through the poller; the
	// writing end is the child's, which must block as a file does.
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, os.NewSyscallError("fcntl", err)
	}
	return &outPipe{r: os.NewFile(uintptr(fds[0]), "|0"), w: os.NewFile(uintptr(fds[1]), "|1"), to: to, done: make(chan error, 1)}, nil
}

// start begins copying once the child holds the writing end: this
// process's copy of it is closed, so that the copy ends when the child,
// and every descendant it gave the pipe to, closed theirs.
func (p *outPipe) start() {
	p.w.Close()
	copiers.take(p)
}

// abandon closes both ends of a pipe whose process did not start.
func (p *outPipe) abandon() {
	p.w.Close()
	p.r.Close()
}

// copy copies the output into its writer, then closes the reading end: a
// child that goes on writing after the writer failed gets EPIPE, as with
// os/exec.
func (p *outPipe) copy() {
	_, err := pooledWriter{p.to}.ReadFrom(p.r)
	p.r.Close()
	if err != nil && p.keeper != nil {
		// Closed before the output's end: the keeper lets go too, or the
		// writer would block on a full pipe instead of getting EPIPE.
		p.keeper.drop(p.keptID)
	}
	p.done <- err
}

// waitOutputs waits until the outputs of a process that ended are copied;
// descendants that outlive it may hold the pipes open: after delay their
// reading ends are closed, and what they write later is lost (as os/exec's
// WaitDelay does). The error is the first, in pipe order, of the copies
// that failed before.
func waitOutputs(pipes []*outPipe, delay time.Duration) error {
	var first error
	var timeout <-chan time.Time
	for i, p := range pipes {
		var err error
		select {
		case err = <-p.done:
		default:
			if timeout == nil {
				t := time.NewTimer(delay)
				defer t.Stop()
				timeout = t.C
			}
			select {
			case err = <-p.done:
			case <-timeout:
				return closeStillCopying(first, pipes[i:], delay)
			}
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// closeStillCopying closes the pipes still copying once the delay is over and
// waits for their copies. A copy ended by that close ends with os.ErrClosed,
// which is no error of the process; the error is first, or that of a copy
// that failed by itself, before or while the pipes were closed.
func closeStillCopying(first error, pipes []*outPipe, delay time.Duration) error {
	for _, p := range pipes {
		p.r.Close()
	}
	for _, p := range pipes {
		if err := <-p.done; first == nil && !errors.Is(err, os.ErrClosed) {
			first = err
		}
	}
	// Said where the output goes, once: an Outputs: block the process
	// left to a child is not read, and the run would otherwise say only
	// that it printed none. After the line the output left unended, not
	// glued to it (a line writer holds it).
	if f, ok := pipes[0].to.(interface{ Flush() }); ok {
		f.Flush()
	}
	fmt.Fprintf(pipes[0].to, "gantry: the process ended, and %v later a process it started still held its output open: what that one prints from now on is not read (start a process meant to run on with setsid, or with its output sent elsewhere)\n", delay)
	return first
}

// copierIdle is how long a copier with nothing to copy waits for another
// pipe before it ends.
const copierIdle = 2 * time.Second

// copierPool hands pipes to copiers that wait for one, and starts a copier
// when none does.
type copierPool struct {
	pipes chan *outPipe
}

var copiers = &copierPool{pipes: make(chan *outPipe)}

// take has a copier copy p.
func (c *copierPool) take(p *outPipe) {
	select {
	case c.pipes <- p:
	default:
		go c.work(p)
	}
}

// work copies p, then the pipes handed to it while it waits, until it has
// waited copierIdle for none.
func (c *copierPool) work(p *outPipe) {
	idle := time.NewTimer(copierIdle)
	defer idle.Stop()
	for {
		p.copy()
		idle.Reset(copierIdle)
		select {
		case p = <-c.pipes:
		case <-idle.C:
			return
		}
	}
}

// outPipes makes the pipes of a process's stdout and stderr where they go
// to writers that are not files (one pipe when both go to the same
// writer, so that their lines keep the order the child wrote them in), and
// gives the child their writing ends; a file, or nil, the child gets as it
// is.
func outPipes(stdout, stderr io.Writer) (childOut, childErr io.Writer, pipes []*outPipe, err error) {
	out, errs := childWriter(stdout), childWriter(stderr)
	pipeFor := func(w io.Writer) (io.Writer, error) {
		pw, ok := w.(pooledWriter)
		if !ok {
			return w, nil
		}
		p, err := newOutPipe(pw.w)
		if err != nil {
			return nil, err
		}
		pipes = append(pipes, p)
		return p.w, nil
	}
	if childOut, err = pipeFor(out); err != nil {
		return nil, nil, nil, err
	}
	if sameWriter(out, errs) {
		return childOut, childOut, pipes, nil
	}
	if childErr, err = pipeFor(errs); err != nil {
		for _, p := range pipes {
			p.abandon()
		}
		return nil, nil, nil, err
	}
	return childOut, childErr, pipes, nil
}

// sameWriter reports whether two writers are the same, as os/exec tells
// them apart: writers of types that cannot be compared are not.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() { _ = recover() }()
	return a == b
}
