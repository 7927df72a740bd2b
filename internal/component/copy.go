package component

import (
	"io"
	"os"
	"sync"
)

// pooledWriter hands os/exec a writer that reads the child's pipe itself,
// into a buffer kept between processes: os/exec copies a pipe into any
// other writer through io.Copy, which allocates (and clears) 32 KiB per
// stream and process — two per component, 64 MiB of garbage for 1,000
// components.
//
// It is a value, so that two wrapping the same writer are equal and
// os/exec still gives stdout and stderr one pipe when they are the same.
type pooledWriter struct{ w io.Writer }

func (p pooledWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

// ReadFrom is what io.Copy uses when the source cannot write itself.
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

// childWriter is what os/exec gets for a process's output: a file as it
// is (the child writes to it directly), nil as nil, anything else pooled.
func childWriter(w io.Writer) io.Writer {
	switch w.(type) {
	case nil, *os.File:
		return w
	}
	return pooledWriter{w}
}
