package component

import (
	"io"
	"os"
	"sync"
)

// pooledWriter copies a child's pipe into a writer through a buffer kept
// between processes (outPipe.copy): io.Copy allocated (and cleared) 32 KiB
// per stream and process — two per component, 64 MiB of garbage for 1,000
// components.
//
// It is a value, so that two wrapping the same writer are equal and
// stdout and stderr still get one pipe when they are the same (outPipes).
type pooledWriter struct{ w io.Writer }

func (p pooledWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

// ReadFrom copies r into the writer until r ends.
func (p pooledWriter) ReadFrom(r io.Reader) (int64, error) {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	var n int64
	for {
		nr, rerr := r.Read(buf)
		if nr > 0 {
			nw, werr := p.w.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, werr
			}
			if nw != nr {
				return n, io.ErrShortWrite
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// childWriter is how a process's output is given to the child: a file as
// it is (the child writes to it directly), nil as nil, anything else
// through a pipe and a copy (outPipes).
func childWriter(w io.Writer) io.Writer {
	switch w.(type) {
	case nil, *os.File:
		return w
	}
	return pooledWriter{w}
}
