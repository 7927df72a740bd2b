package params

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// In #{...} expressions, dotted names (db.port) resolve like ${db.port}. Names
// that are not CEL identifiers are reached through two maps:
// params["component.auth-service.secret"] and outputs["db"]["host"].
const (
	paramsVar  = "params"
	outputsVar = "outputs"
)

// ExprError is an expression that does not compile or fails to evaluate; it
// shows the expression with a caret.
type ExprError struct {
	Expr   string
	Offset int // into Expr
	Msg    string
	// Unknown is the name nothing defines, when that is the error.
	Unknown string
}

func (e *ExprError) Error() string {
	return fmt.Sprintf("#{%s}: %s\n%s", e.Expr, e.Msg, caret(e.Expr, e.Offset))
}

type compiled struct {
	prg   cel.Program
	names []nameRef // identifier chains, for unknown-name checks and dependencies
	// paramsAt are where the expression reads a dotted name through params
	// (params.db.host), for the caret of its error when it names nothing.
	paramsAt map[string]int
}

// nameRef is an identifier chain of an expression: a.b.c gives the candidates
// a.b.c, a.b and a, longest first, as CEL resolves them.
type nameRef struct {
	candidates []string
	offset     int
	// tests is set for a chain inside has(): parameter names are not
	// fields of maps (CEL reads has(db.host) as db.host's value).
	tests bool
}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
	programs   sync.Map // expression -> *compiled or error
	// celFunctions names the declared functions, so that lists.range(3) is
	// a call of lists.range and not the parameter "lists".
	celFunctions map[string]bool
)

func celEnvironment() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		base, err := cel.NewEnv(ext.Strings(), ext.Encoders(), ext.Math(), ext.Lists())
		if err != nil {
			celEnvErr = err
			return
		}
		celEnv, celEnvErr = boundedFunctions(base)
		if celEnvErr == nil {
			celFunctions = map[string]bool{}
			for name := range celEnv.Functions() {
				celFunctions[name] = true
			}
		}
	})
	return celEnv, celEnvErr
}

// maxExprCost bounds the work of one expression (CEL cost units).
const maxExprCost = 10_000_000

var issueLocation = regexp.MustCompile(`<input>:(\d+):(\d+): (.*)`)

// compile parses and plans an expression once; the result is cached.
func compile(expr string) (*compiled, error) {
	if len(expr) > maxExprSource {
		return nil, &ExprError{Expr: expr[:40] + "…", Msg: fmt.Sprintf("the expression is %d bytes long; at most %d", len(expr), maxExprSource)}
	}
	if v, ok := programs.Load(expr); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*compiled), nil
	}
	c, err := compileUncached(expr)
	if err != nil {
		programs.Store(expr, err)
		return nil, err
	}
	programs.Store(expr, c)
	return c, nil
}

func compileUncached(expr string) (*compiled, error) {
	e, err := celEnvironment()
	if err != nil {
		return nil, fmt.Errorf("expression environment: %w", err)
	}
	parsed, iss := e.Parse(expr)
	if iss != nil && iss.Err() != nil {
		return nil, issuesError(expr, iss.Err())
	}
	c := &compiled{}
	native := parsed.NativeRep()
	w := nameWalker{info: native.SourceInfo(), c: c, fac: ast.NewExprFactory(), lastID: ast.MaxID(native)}
	w.walk(native.Expr(), map[string]bool{})
	for _, n := range c.names {
		if n.tests {
			return nil, &ExprError{Expr: expr, Offset: n.offset, Msg: fmt.Sprintf("has() tests a field of a map, not whether a parameter is set: for that, write has(params.%s)", n.candidates[0])}
		}
	}
	// A cost limit stops runaway comprehensions: parameter values are small.
	// The cost is tracked so that each evaluation is charged to its budget.
	c.prg, err = e.Program(parsed, cel.CostLimit(maxExprCost), cel.EvalOptions(cel.OptTrackCost), cel.CustomDecoratorV2(boundedCalls), cel.InterruptCheckFrequency(16))
	if err != nil {
		return nil, &ExprError{Expr: expr, Msg: err.Error()}
	}
	return c, nil
}

// issuesError turns cel-go's issues into one ExprError at the first issue.
func issuesError(expr string, err error) error {
	first := strings.SplitN(err.Error(), "\n", 2)[0]
	m := issueLocation.FindStringSubmatch(first)
	if m == nil {
		return &ExprError{Expr: expr, Msg: first}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	off := 0
	for i := 1; i < line; i++ {
		nl := strings.IndexByte(expr[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	off += col - 1
	if off > len(expr) {
		off = len(expr)
	}
	msg := m[3]
	if strings.HasPrefix(msg, "Syntax error: ") {
		msg = "syntax error: " + strings.TrimPrefix(msg, "Syntax error: ")
	}
	return &ExprError{Expr: expr, Offset: off, Msg: msg}
}

// nameWalker collects an expression's identifier chains that are not bound
// by a comprehension (map, filter, all, exists) or the params/outputs maps,
// and rewrites the chains through params into lookups of dotted names.
type nameWalker struct {
	info   *ast.SourceInfo
	c      *compiled // what it finds goes there
	fac    ast.ExprFactory
	lastID int64 // the largest expression id in use
}

// id is a new expression id.
func (w *nameWalker) id() int64 {
	w.lastID++
	return w.lastID
}

// walk walks e with the names bound around it.
func (w *nameWalker) walk(e ast.Expr, bound map[string]bool) {
	switch e.Kind() {
	case ast.IdentKind, ast.SelectKind:
		var parts []string
		cur := e
		for cur.Kind() == ast.SelectKind && !cur.AsSelect().IsTestOnly() {
			parts = append([]string{cur.AsSelect().FieldName()}, parts...)
			cur = cur.AsSelect().Operand()
		}
		test := cur.Kind() == ast.SelectKind // has(a.b)
		if test {
			// Its operand is what has() looks into. (Walking cur
			// itself again never ended.)
			parts = append([]string{cur.AsSelect().FieldName()}, parts...)
			cur = cur.AsSelect().Operand()
			for cur.Kind() == ast.SelectKind && !cur.AsSelect().IsTestOnly() {
				parts = append([]string{cur.AsSelect().FieldName()}, parts...)
				cur = cur.AsSelect().Operand()
			}
		}
		if cur.Kind() != ast.IdentKind {
			// A proper part of e: each call walks a smaller tree.
			w.walk(cur, bound)
			return
		}
		root := cur.AsIdent()
		if root == paramsVar && !bound[root] && len(parts) > 1 {
			// Parameter values are strings, which have no fields:
			// params.db.host can only mean the parameter db.host, even
			// beside a parameter db (params.db is its value).
			dotted := strings.Join(parts, ".")
			if _, ok := w.c.paramsAt[dotted]; !ok {
				if w.c.paramsAt == nil {
					w.c.paramsAt = map[string]int{}
				}
				w.c.paramsAt[dotted] = int(w.info.GetStartLocation(cur.ID()).Column())
			}
			name := w.fac.NewLiteral(w.id(), types.String(dotted))
			params := w.fac.NewIdent(w.id(), paramsVar)
			if test {
				e.SetKindCase(w.fac.NewCall(w.id(), operators.In, name, params))
			} else {
				e.SetKindCase(w.fac.NewCall(w.id(), operators.Index, params, name))
			}
			return
		}
		if bound[root] || root == paramsVar || root == outputsVar {
			return
		}
		chain := append([]string{root}, parts...)
		ref := nameRef{offset: int(w.info.GetStartLocation(cur.ID()).Column()), tests: test}
		for i := len(chain); i > 0; i-- {
			ref.candidates = append(ref.candidates, strings.Join(chain[:i], "."))
		}
		w.c.names = append(w.c.names, ref)
	case ast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() && celFunctions[chainName(c.Target())+"."+c.FunctionName()] {
			// A namespaced function (lists.range, base64.encode): its
			// "target" is the namespace.
		} else if c.IsMemberFunction() {
			w.walk(c.Target(), bound)
		}
		for _, a := range c.Args() {
			w.walk(a, bound)
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			w.walk(el, bound)
		}
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			w.walk(me.Key(), bound)
			w.walk(me.Value(), bound)
		}
	case ast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			w.walk(f.AsStructField().Value(), bound)
		}
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		w.walk(c.IterRange(), bound)
		inner := map[string]bool{c.IterVar(): true, c.AccuVar(): true}
		if c.HasIterVar2() {
			inner[c.IterVar2()] = true
		}
		for k := range bound {
			inner[k] = true
		}
		w.walk(c.AccuInit(), bound)
		w.walk(c.LoopCondition(), inner)
		w.walk(c.LoopStep(), inner)
		w.walk(c.Result(), inner)
	}
}

// chainName is the dotted name of an identifier chain (a.b.c), or "".
func chainName(e ast.Expr) string {
	var parts []string
	for e.Kind() == ast.SelectKind && !e.AsSelect().IsTestOnly() {
		parts = append([]string{e.AsSelect().FieldName()}, parts...)
		e = e.AsSelect().Operand()
	}
	if e.Kind() != ast.IdentKind {
		return ""
	}
	return strings.Join(append([]string{e.AsIdent()}, parts...), ".")
}

// ExprNames returns the names an expression refers to (the longest candidate of
// each identifier chain), for dependency analysis. Invalid expressions give none.
func ExprNames(expr string) [][]string {
	c, err := compile(expr)
	if err != nil {
		return nil
	}
	out := make([][]string, len(c.names))
	for i, n := range c.names {
		out[i] = n.candidates
	}
	return out
}

// evalCEL evaluates an expression with names resolved through r, charging
// its cost and result to budget.
func evalCEL(expr string, r Resolver, budget *Budget) (string, error) {
	c, err := compile(expr)
	if err != nil {
		return "", err
	}
	start := time.Now()
	deadline, err := budget.deadline(start)
	if err != nil {
		return "", err
	}
	a := &activation{r: r, values: map[string]any{}, deadline: deadline, paramsAt: c.paramsAt}
	// Resolve every identifier chain up front: unknown names get a clear error
	// (with a caret) instead of CEL's "no such attribute", and cycles surface.
	// Every value is a string, as parameter values are: flag == 'true',
	// int(port) + 1.
	for _, n := range c.names {
		found := false
		for _, cand := range n.candidates {
			v, err := r.Lookup(cand)
			var ue *UnknownError
			if errors.As(err, &ue) && ue.Name == cand {
				continue
			}
			if err != nil {
				return "", err
			}
			a.values[cand] = v
			found = true
			break
		}
		if !found {
			return "", &ExprError{Expr: expr, Offset: n.offset, Msg: (&UnknownError{Name: n.candidates[0]}).Error(), Unknown: n.candidates[0]}
		}
	}
	// The context stops a comprehension between steps (every 16th) once the
	// deadline passed or a call found the expression past its bounds: its
	// steps would go on otherwise, each failing, or making no call at all.
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	a.stop = cancel
	val, details, err := c.prg.ContextEval(ctx, a)
	if ctx.Err() == context.DeadlineExceeded {
		a.slow = true
	}
	budget.spendTime(time.Since(start))
	if details != nil && details.ActualCost() != nil {
		if berr := budget.spendCost(*details.ActualCost()); berr != nil {
			return "", berr
		}
	}
	if err != nil || a.calls > maxCalls || a.slow {
		if a.err != nil {
			return "", a.failure(expr)
		}
		if a.slow && budget.overTime() {
			return "", budget.timeError()
		}
		if a.slow {
			return "", &ExprError{Expr: expr, Msg: fmt.Sprintf("the expression ran longer than %v; expressions are for short computations", exprTime.one)}
		}
		if a.calls > maxCalls {
			return "", &ExprError{Expr: expr, Msg: fmt.Sprintf("more than %d function calls in one expression (each step of a map, filter, all or exists makes some); expressions are for short computations", maxCalls)}
		}
		if ReadsSecret(r) {
			return "", withheld(expr)
		}
		return "", &ExprError{Expr: expr, Msg: err.Error()}
	}
	if a.err != nil {
		return "", a.failure(expr)
	}
	if types.IsError(val) {
		if ReadsSecret(r) {
			return "", withheld(expr)
		}
		return "", &ExprError{Expr: expr, Msg: fmt.Sprint(val)}
	}
	// A string result is the value as it is; others are formatted (JSON).
	size := valueSize(val, MaxValueSize+1)
	if s, ok := val.(types.String); ok {
		size = len(s)
	}
	if size > MaxValueSize {
		return "", &ExprError{Expr: expr, Msg: fmt.Sprintf("the result would be larger than %s", sizeText(MaxValueSize))}
	}
	return format(val)
}

// format renders a CEL result as a parameter value: strings as they are,
// numbers and booleans in their usual form, lists of scalars comma-separated,
// anything else as JSON.
func format(v ref.Val) (string, error) {
	switch x := v.Value().(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case []byte:
		return string(x), nil
	}
	if v.Type() == types.NullType {
		return "", nil
	}
	var target reflect.Type
	switch v.(type) {
	case traits.Mapper:
		target = reflect.TypeOf(map[string]any{})
	case traits.Lister:
		target = reflect.TypeOf([]any{})
	default:
		return "", fmt.Errorf("cannot use a %s as a parameter value", v.Type().TypeName())
	}
	native, err := v.ConvertToNative(target)
	if err != nil {
		return "", fmt.Errorf("cannot use a %s as a parameter value: %v", v.Type().TypeName(), err)
	}
	if list, ok := native.([]any); ok {
		parts := make([]string, len(list))
		scalar := true
		for i, it := range list {
			switch s := it.(type) {
			case string:
				parts[i] = s
			case bool, int64, uint64, float64, int, float32:
				parts[i] = fmt.Sprint(s)
			default:
				scalar = false
			}
		}
		if scalar {
			return strings.Join(parts, ","), nil
		}
	}
	b, err := json.Marshal(native)
	if err != nil {
		return "", fmt.Errorf("cannot use a %s as a parameter value", v.Type().TypeName())
	}
	return string(b), nil
}

// activation answers CEL's name lookups from the values resolved up front, and
// serves the params and outputs maps lazily.
type activation struct {
	r      Resolver
	values map[string]any
	err    error
	// calls counts the expression's function calls (each asks stepName
	// before it runs, see boundedCalls), up to maxCalls; slow is set when
	// they ran past the deadline (exprTime).
	calls    int
	stop     context.CancelFunc
	deadline time.Time
	slow     bool
	// paramsAt is compiled.paramsAt.
	paramsAt map[string]int
}

// maxCalls bounds the function calls of one expression, and so the steps
// of its comprehensions (map, filter, all, exists…), each of which makes a
// call or more. The cost limit cannot: cel-go's cost tracker kept a stack
// that grew with every step and was searched at each, so n steps took time
// in n², and a million-element list took hours within the limit.
// It still grows in n² (20,000 steps: 0.3 s; 40,000: 1.2 s). Parameter
// values need far fewer.
const maxCalls = 20_000

// maxExprSource bounds the text of one expression: each call may handle a
// value of up to 16 MiB, so the number of calls must be small.
const maxExprSource = 4096

// The time of expressions is bounded too (exprTime), checked at each step
// of their comprehensions: steps are counted, but a step can handle a large
// value (size() of a 16 MiB string counts its runes), and no count of steps
// or cost units says how long that takes. An expression that runs for
// seconds is a mistake or an attack, never a configuration value.

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case stepName:
		a.calls++
		if a.calls%16 == 0 && time.Now().After(a.deadline) {
			a.slow = true
		}
		if a.calls > maxCalls || a.slow {
			a.stop()
			return true, true
		}
		return false, true
	case paramsVar:
		return &lazyMap{get: func(k string) (ref.Val, error) {
			v, err := a.r.Lookup(k)
			if err != nil {
				return nil, err
			}
			return types.String(v), nil
		}, fail: a.fail}, true
	case outputsVar:
		return &lazyMap{get: func(comp string) (ref.Val, error) {
			return &lazyMap{get: func(k string) (ref.Val, error) {
				v, err := a.r.Output(comp, k)
				if err != nil {
					return nil, err
				}
				return types.String(v), nil
			}, fail: a.fail}, nil
		}, fail: a.fail}, true
	}
	v, ok := a.values[name]
	return v, ok
}

func (a *activation) Parent() interpreter.Activation { return nil }

// failure is the error a lookup made during the evaluation failed with
// (a.err): withheld when the expression read a secret, since a key
// computed from the secret would be quoted (params[db.password]); a budget's
// error says nothing of values.
func (a *activation) failure(expr string) error {
	var be *BudgetError
	if ReadsSecret(a.r) && !errors.As(a.err, &be) {
		return withheld(expr)
	}
	// A name read through params that names nothing: said with the
	// expression and a caret, as a name read alone is.
	var ue *UnknownError
	if errors.As(a.err, &ue) && ue.Component == "" {
		if at, ok := a.paramsAt[ue.Name]; ok {
			return &ExprError{Expr: expr, Offset: at, Msg: ue.Error(), Unknown: ue.Name}
		}
	}
	return a.err
}

// withheld is the error of an expression that failed after it read a
// secret: CEL's message quotes the values it failed on (no such key: …,
// error parsing regexp: …), which may be the secret or made from it.
func withheld(expr string) error {
	return &ExprError{Expr: expr, Msg: "it failed on a secret or a value made from one; its message is withheld, as it would show the value"}
}

func (a *activation) fail(err error) {
	if a.err == nil {
		a.err = err
	}
}

// lazyMap is a CEL map whose entries are looked up on access.
type lazyMap struct {
	get  func(key string) (ref.Val, error)
	fail func(error)
}

var lazyMapType = types.NewObjectType("gantry.Lookup", traits.IndexerType|traits.ContainerType)

func (m *lazyMap) Get(key ref.Val) ref.Val {
	k, ok := key.Value().(string)
	if !ok {
		return types.NewErr("lookup keys are strings, got %s", key.Type().TypeName())
	}
	v, err := m.get(k)
	if err != nil {
		m.fail(err)
		return types.NewErr("%v", err)
	}
	return v
}

func (m *lazyMap) Contains(key ref.Val) ref.Val {
	k, ok := key.Value().(string)
	if !ok {
		return types.False
	}
	_, err := m.get(k)
	return types.Bool(err == nil)
}

// IsSet is has()'s question (has(params.x)): whether the key names
// something, like Contains, without the lookup's failure.
func (m *lazyMap) IsSet(key ref.Val) ref.Val { return m.Contains(key) }

func (m *lazyMap) ConvertToNative(reflect.Type) (any, error) {
	return nil, errors.New("parameter lookups cannot be converted")
}
func (m *lazyMap) ConvertToType(t ref.Type) ref.Val {
	return types.NewErr("parameter lookups cannot be converted to %s", t.TypeName())
}
func (m *lazyMap) Equal(ref.Val) ref.Val { return types.False }
func (m *lazyMap) Type() ref.Type        { return lazyMapType }
func (m *lazyMap) Value() any            { return m }
