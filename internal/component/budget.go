package component

import (
	"fmt"
	"reflect"
)

// Bounds on one render, so that no template — a typo or a hostile one — can
// exhaust gantry's memory or hang it. Every function of a Go template runs
// through a renderBudget: its arguments and results are measured, loops and
// template calls cost work, and the text rendered is capped. The bounds are
// far above what configuration files need.
const (
	maxTemplateBytes = 16 << 20 // a template's source
	maxValueBytes    = 16 << 20 // any one value a function builds, counted flat
	maxValueDepth    = 64       // how deeply values nest
	loopCost         = 500      // work of one range iteration or template call (about its time in ns)
	callCost         = 500      // work of calling a function, besides its data
	nodeOverhead     = 8        // what each element of a list or map counts, besides its content
	bcryptWork       = 1 << 24  // work of one bcrypt hash: a render hashes at most 64 values
)

// fixedWork is the work of functions whose cost is not in the data they
// are given: bcrypt takes tens of milliseconds to hash a short password,
// on purpose, so a loop over it would hang the run for hours.
var fixedWork = map[string]int64{"bcrypt": bcryptWork}

// renderLimits bounds a whole render; a variable so that tests can show the
// bounds hold without spending a second on each.
var renderLimits = struct {
	rendered int   // the text one template renders
	produced int64 // all the values functions build
	work     int64 // work units, about a nanosecond each
}{rendered: 64 << 20, produced: 256 << 20, work: 1 << 30}

// LimitError is a template that goes past one of the render's bounds.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

func limitErrorf(format string, args ...any) *LimitError {
	return &LimitError{Msg: fmt.Sprintf(format, args...)}
}

// renderBudget is what one render may still spend.
type renderBudget struct {
	work     int64
	produced int64
	at       int // byte offset of the last loop or template call begun, for errors without a place
}

func newRenderBudget() *renderBudget {
	return &renderBudget{work: renderLimits.work, produced: renderLimits.produced}
}

// spend takes units of work; what names the function or loop for the error.
func (b *renderBudget) spend(what string, units int64) error {
	b.work -= units
	if b.work < 0 {
		return limitErrorf("%s: the template does more than %d units of work (loops, template calls and the data its functions handle); does a loop or a recursion never end?", what, renderLimits.work)
	}
	return nil
}

// produce accounts for a value of size bytes that a function built.
func (b *renderBudget) produce(what string, size int64) error {
	if size > maxValueBytes {
		return limitErrorf("%s: builds a value of more than %d bytes", what, maxValueBytes)
	}
	b.produced -= size
	if b.produced < 0 {
		return limitErrorf("%s: the template's functions build more than %d bytes in all", what, renderLimits.produced)
	}
	return b.spend(what, size)
}

// tick is the cost of one range iteration or template call; at is its
// offset in the source.
func (b *renderBudget) tick(at int) (string, error) {
	b.at = at
	return "", b.spend("loop", loopCost)
}

// charge takes the work of a text/template builtin (eq, index, …) on x:
// comparing and indexing cost what their operands hold.
func (b *renderBudget) charge(x any) (any, error) {
	units := int64(callCost)
	switch v := reflect.ValueOf(x); v.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		units += int64(v.Len())
	}
	if err := b.spend("comparison", units); err != nil {
		return nil, err
	}
	return x, nil
}

// wrap makes fn, a template function, pay for its arguments and results and
// refuse results past the bounds. Functions whose result can be much larger
// than their arguments (repeat, indent, …) check their own sizes before they
// build anything; wrap catches the rest after the fact. A bound crossed is a
// panic that text/template turns into the call's error.
func (b *renderBudget) wrap(name string, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		units := callCost + fixedWork[name]
		for _, a := range args {
			n, err := flatSize(a, b.work)
			if err != nil {
				panic(limitErrorf("%s: %v", name, err))
			}
			units += n
		}
		if err := b.spend(name, units); err != nil {
			panic(err)
		}
		var out []reflect.Value
		if t.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		if len(out) == 2 && !out[1].IsNil() {
			return out
		}
		n, err := flatSize(out[0], maxValueBytes)
		if err != nil {
			panic(limitErrorf("%s: %v", name, err))
		}
		if err := b.produce(name, n); err != nil {
			panic(err)
		}
		return out
	}).Interface()
}

// flatSize is what v holds with every shared part counted each time it
// appears — what printing or encoding it would produce — stopping once past
// limit. Values nested deeper than maxValueDepth are an error.
func flatSize(v reflect.Value, limit int64) (int64, error) {
	m, err := measure(v, limit)
	return m.size, err
}

// shape is the measure of a value: its flat size and how many scalars it
// holds (each of which a printf width pads).
type shape struct{ size, leaves int64 }

// measure walks v, counting shared parts each time they appear, until its
// size passes limit.
func measure(v reflect.Value, limit int64) (shape, error) {
	var m shape
	var walk func(v reflect.Value, depth int) error
	walk = func(v reflect.Value, depth int) error {
		if m.size > limit {
			return nil
		}
		if depth > maxValueDepth {
			return fmt.Errorf("a value nested more than %d deep", maxValueDepth)
		}
		switch v.Kind() {
		case reflect.Invalid:
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				return walk(v.Elem(), depth)
			}
		case reflect.String:
			m.size += int64(v.Len())
			m.leaves++
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				m.size += int64(v.Len())
				m.leaves++
				return nil
			}
			for i := 0; i < v.Len() && m.size <= limit; i++ {
				m.size += nodeOverhead
				if err := walk(v.Index(i), depth+1); err != nil {
					return err
				}
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() && m.size <= limit {
				m.size += nodeOverhead
				if err := walk(it.Key(), depth+1); err != nil {
					return err
				}
				if err := walk(it.Value(), depth+1); err != nil {
					return err
				}
			}
		default:
			m.size += nodeOverhead
			m.leaves++
		}
		return nil
	}
	err := walk(v, 0)
	return m, err
}
