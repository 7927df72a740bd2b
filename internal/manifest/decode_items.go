package manifest

import (
	"reflect"
	"runtime"
	"sync"
)

// parallelItems is the length from which a list's items are decoded on a
// worker per processor: a stack of 10,000 components spent 50 ms decoding
// its components: list on one.
var parallelItems = 512

// decodeItems decodes items into the slice s, each worker a contiguous run
// of them with a decoder of its own; the problems found are added in the
// items' order, and the positions recorded merged, so that the result is
// the one decoding them one after the other gives. A panic of a worker is
// raised again here.
func (d *decoder) decodeItems(items []*Node, s reflect.Value, path string) {
	workers := min(runtime.GOMAXPROCS(0), len(items))
	diags := make([]Diagnostics, workers)
	recs := make([]map[string]Pos, workers)
	panics := make([]any, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(items)/workers, (w+1)*len(items)/workers
		wd := &decoder{diags: &diags[w], recBase: d.recBase}
		if d.rec != nil {
			wd.rec = map[string]Pos{}
			recs[w] = wd.rec
		}
		wg.Go(func() {
			defer func() { panics[w] = recover() }()
			for i := lo; i < hi; i++ {
				wd.decode(items[i], s.Index(i), itemPath(path, i))
			}
		})
	}
	wg.Wait()
	for w := range workers {
		if panics[w] != nil {
			panic(panics[w])
		}
		*d.diags = append(*d.diags, diags[w]...)
		for k, p := range recs[w] {
			d.rec[k] = p
		}
	}
}
