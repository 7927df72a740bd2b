package engine

// goStep runs a step's work on a goroutine: one of the run's workers that
// is waiting for work if there is one, a new worker otherwise.
//
// Why not a goroutine per step: a new goroutine starts on a 2 KB stack, and
// a step's work (a component's process started through os/exec, its
// fingerprint, its journal records) grows it three or four times, each a
// copy of the whole stack. Go sizes new stacks from the stacks it saw at
// its last collection, and a run of a few thousand components often sees
// none. A worker keeps the stack it grew for the next step; at 1,000
// no-op components the copies were 5 % of gantry's CPU (bench/README.md).
func (r *run) goStep(work func()) {
	select {
	case r.idle <- work:
	default:
		go r.worker(work)
	}
}

// worker does work, then the steps handed to it, until the run ends. About
// as many workers live as steps run at once: a few more, since a worker
// that has sent its step's completion is not yet waiting for the next.
func (r *run) worker(work func()) {
	for {
		work()
		select {
		case work = <-r.idle:
		case <-r.quit:
			return
		}
	}
}
