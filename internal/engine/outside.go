package engine

// A step that waits for something outside the run — another gantry run's
// lock on a folder — gives its --parallel slot back while it waits (Env.
// Outside). Were it to keep the slot, two runs each holding a folder the
// other waits for could fill each other's slots with waiting steps, and
// neither holder could get a slot to finish and let go.

// slotRequest is a message from a step's goroutine to the loop: give the
// slot back (grant nil), or ask for one again (the loop closes grant when
// the step has it).
type slotRequest struct {
	grant chan struct{}
}

// Outside runs fn without the step's slot. A light step holds no slot; its
// fn runs as is.
func (e *stepEnv) Outside(fn func() error) error {
	if e.n.Light {
		return fn()
	}
	r := e.r
	r.slots <- slotRequest{}
	err := fn()
	grant := make(chan struct{})
	r.slots <- slotRequest{grant: grant}
	<-grant
	return err
}

// slotMessage takes a step's slot back or queues its request for one.
func (r *run) slotMessage(m slotRequest) {
	if m.grant == nil {
		r.s.Leave()
		return
	}
	r.s.Want()
	r.wanting = append(r.wanting, m.grant)
}
