package params

import (
	"fmt"
	"sync/atomic"
	"time"
)

// MaxValueSize bounds any one expanded value, as template values are bounded:
// 40 parameters that each double the one before would otherwise reach a
// terabyte.
const MaxValueSize = 16 << 20

// Limits of the total work of the expansions that share a budget: those of
// one lock and of every component expanded with its parameters, or those of
// one rendered template. Many values each under MaxValueSize, or many
// expressions each under the per-expression cost limit, must not add up to
// an exhausted machine.
const (
	maxTotalBytes = 128 << 20
	maxTotalCost  = 100_000_000
)

// Budget is the work the expansions sharing it may still do: bytes written
// into values and CEL cost. It is safe for concurrent use (components expand
// in parallel).
type Budget struct {
	bytes, cost atomic.Int64
	spent       atomic.Int64 // nanoseconds in expressions
}

// NewBudget returns a full budget.
func NewBudget() *Budget { return &Budget{} }

// Trial returns a budget that starts where b is now, for work done ahead
// that may be thrown away and done again: what it spends is charged to b
// only when commit is called. Done again, the work is charged once more,
// so a trial at most doubles what the work may cost.
func (b *Budget) Trial() (trial *Budget, commit func()) {
	t := &Budget{}
	bytes, cost, spent := b.bytes.Load(), b.cost.Load(), b.spent.Load()
	t.bytes.Store(bytes)
	t.cost.Store(cost)
	t.spent.Store(spent)
	return t, func() {
		b.bytes.Add(t.bytes.Load() - bytes)
		b.cost.Add(t.cost.Load() - cost)
		b.spent.Add(t.spent.Load() - spent)
	}
}

// BudgetError is an expansion refused because it would exceed a bound.
type BudgetError struct{ Msg string }

func (e *BudgetError) Error() string { return e.Msg }

// SpendBytes charges n bytes written into values by an expansion done
// outside Template.Eval (a nested stack's config substituted into its
// leaves' values): an error once the budget's bytes are spent.
func (b *Budget) SpendBytes(n int) error { return b.spendBytes(n) }

func (b *Budget) spendBytes(n int) error {
	if b.bytes.Add(int64(n)) > maxTotalBytes {
		return &BudgetError{Msg: fmt.Sprintf("the expansions of this run wrote more than %s in all; a parameter that repeats another many times?", sizeText(maxTotalBytes))}
	}
	return nil
}

func (b *Budget) spendCost(n uint64) error {
	if b.cost.Add(int64(n)) > maxTotalCost {
		return &BudgetError{Msg: fmt.Sprintf("the expressions of this run cost more than %d in all (CEL cost units)", maxTotalCost)}
	}
	return nil
}

// exprTime bounds the time of expressions: of one (checked at each step of
// its comprehensions) and of all that share a budget. Variables so that
// tests can lower them.
var exprTime = struct{ one, total time.Duration }{one: 2 * time.Second, total: 10 * time.Second}

// deadline is when an expression that starts now must have ended: its own
// bound, or what is left of the total, whichever comes first. It is an
// error when nothing is left.
func (b *Budget) deadline(start time.Time) (time.Time, error) {
	left := exprTime.total - time.Duration(b.spent.Load())
	if left <= 0 {
		return time.Time{}, b.timeError()
	}
	return start.Add(min(exprTime.one, left)), nil
}

// spendTime charges the time an expression took.
func (b *Budget) spendTime(d time.Duration) { b.spent.Add(int64(d)) }

// overTime reports whether the expressions sharing the budget have used all
// their time.
func (b *Budget) overTime() bool { return time.Duration(b.spent.Load()) >= exprTime.total }

func (b *Budget) timeError() error {
	return &BudgetError{Msg: fmt.Sprintf("the expressions of this run took more than %v in all; expressions are for short computations", exprTime.total)}
}

// Budgeted is a Resolver whose expansions are charged to a budget shared with
// other expansions. Expansions through a Resolver that is not Budgeted get a
// budget of their own.
type Budgeted interface {
	Budget() *Budget
}

// BudgetOf returns r's budget, or a new one when r has none.
func BudgetOf(r Resolver) *Budget {
	if b, ok := r.(Budgeted); ok {
		if bud := b.Budget(); bud != nil {
			return bud
		}
	}
	return NewBudget()
}

// WithBudget returns r with its expansions charged to b: a whole rendered
// template shares one budget, however many ${} and #{} it holds.
func WithBudget(r Resolver, b *Budget) Resolver { return budgeted{Resolver: r, b: b} }

type budgeted struct {
	Resolver
	b *Budget
}

func (r budgeted) Budget() *Budget { return r.b }

// SecretRead reports whether the resolver it charges has read a secret.
func (r budgeted) SecretRead() bool { return ReadsSecret(r.Resolver) }

func sizeText(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
