package params

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/functions"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// Bounds of what one CEL call may build. The per-expression cost limit
// counts calls, not the bytes they allocate, and it is checked after a call
// returned: 'a'.replace('a', s) seven deep builds 100 MB in one expression
// of trivial cost. So every function that builds a value checks the size of
// what it would build before it builds it.
const (
	// maxElements bounds the lists a call builds (lists.range, split,
	// flatten, +). Comprehensions take at most maxIterations steps anyway:
	// a longer list can only be measured or indexed.
	maxElements = 100_000
	// maxDistinct bounds the lists distinct() takes: it compares every
	// element with every other.
	maxDistinct = 3000
)

// sizeGuard checks the arguments of one overload before it runs.
type sizeGuard struct {
	function, overload string
	check              func(args []ref.Val) error
}

var sizeGuards = []sizeGuard{
	{"replace", "string_replace_string_string", func(a []ref.Val) error {
		return maxBytes("replace", replacedSize(str(a[0]), str(a[1]), str(a[2]), -1))
	}},
	{"replace", "string_replace_string_string_int", func(a []ref.Val) error {
		return maxBytes("replace", replacedSize(str(a[0]), str(a[1]), str(a[2]), int64(a[3].(types.Int))))
	}},
	{"join", "list_join", func(a []ref.Val) error { return maxBytes("join", joinedSize(a[0], "")) }},
	{"join", "list_join_string", func(a []ref.Val) error { return maxBytes("join", joinedSize(a[0], str(a[1]))) }},
	{"format", "string_format", func(a []ref.Val) error {
		return maxBytes("format", formattedSize(str(a[0]), a[1]))
	}},
	{"strings.quote", "strings_quote", func(a []ref.Val) error {
		return maxBytes("strings.quote", quotedSize(str(a[0])))
	}},
	{"split", "string_split_string", func(a []ref.Val) error {
		return maxCount("split", splitCount(str(a[0]), str(a[1])))
	}},
	{"split", "string_split_string_int", func(a []ref.Val) error {
		n := splitCount(str(a[0]), str(a[1]))
		if lim := int64(a[2].(types.Int)); lim >= 0 && lim < int64(n) {
			n = int(lim)
		}
		return maxCount("split", n)
	}},
	{"lists.range", "lists_range", func(a []ref.Val) error {
		if n := int64(a[0].(types.Int)); n > maxElements {
			return fmt.Errorf("lists.range: %d elements; at most %d", n, maxElements)
		}
		return nil
	}},
	{"flatten", "list_flatten", func(a []ref.Val) error { return maxCount("flatten", flatCount(a[0], 1, maxElements)) }},
	{"flatten", "list_flatten_int", func(a []ref.Val) error {
		return maxCount("flatten", flatCount(a[0], int64(a[1].(types.Int)), maxElements))
	}},
	{"distinct", "list_distinct", func(a []ref.Val) error {
		if n := listLen(a[0]); n > maxDistinct {
			return fmt.Errorf("distinct: a list of %d elements; at most %d", n, maxDistinct)
		}
		return nil
	}},
	{"base64.encode", "base64_encode_bytes", func(a []ref.Val) error {
		return maxBytes("base64.encode", (len(byt(a[0]))+2)/3*4)
	}},
}

// boundedCalls makes every function call count itself against the
// expression's bounds (stepName, asked of the activation) before it runs, and
// + check the size of what it would build before building it: the standard
// library binds + once for every type, so it cannot be redeclared like the
// functions above, and cel-go's cost of + (a tenth of a unit a byte, on
// checked expressions only) lets one expression of many terms build
// gigabytes. Calls are counted because every step of a comprehension that
// builds or tests something makes one, and cel-go (since v0.27) interrupts
// comprehensions only through a context, which cannot count.
func boundedCalls(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok {
		return i, nil
	}
	return &boundedCall{InterpretableCall: call, add: call.Function() == operators.Add && len(call.Args()) == 2}, nil
}

// stepName is the name a bounded call asks the activation: the answer says
// whether the expression is past its bounds.
const stepName = "#step"

type boundedCall struct {
	interpreter.InterpretableCall
	add bool
}

// Exec is how the interpreter runs a call (InterpretableV2).
func (c *boundedCall) Exec(f *interpreter.ExecutionFrame) ref.Val {
	if stop, _ := f.ResolveName(stepName); stop == true {
		return types.NewErr("stopped: the expression is past its bounds")
	}
	if !c.add {
		return c.InterpretableCall.Exec(f)
	}
	args := c.Args()
	return c.checkedAdd(args[0].Exec(f), func() ref.Val { return args[1].Exec(f) })
}

// Eval is how a caller of the older interface runs it.
func (c *boundedCall) Eval(act interpreter.Activation) ref.Val {
	if stop, _ := act.ResolveName(stepName); stop == true {
		return types.NewErr("stopped: the expression is past its bounds")
	}
	if !c.add {
		return c.InterpretableCall.Eval(act)
	}
	args := c.Args()
	return c.checkedAdd(args[0].Eval(act), func() ref.Val { return args[1].Eval(act) })
}

func (c *boundedCall) checkedAdd(l ref.Val, right func() ref.Val) ref.Val {
	if types.IsUnknownOrError(l) {
		return l
	}
	r := right()
	if types.IsUnknownOrError(r) {
		return r
	}
	var err error
	switch l.(type) {
	case types.String:
		err = maxBytes("+", len(str(l))+len(str(r)))
	case types.Bytes:
		err = maxBytes("+", len(byt(l))+len(byt(r)))
	case traits.Lister:
		err = maxCount("+", listLen(l)+listLen(r))
	}
	if err != nil {
		return types.WrapErr(err)
	}
	adder, ok := l.(traits.Adder)
	if !ok {
		return types.NoSuchOverloadErr()
	}
	return adder.Add(r)
}

// boundedFunctions redeclares the overloads of env that build values with a
// check of the size of what they would build, before they build it; the
// original binding does the work.
func boundedFunctions(env *cel.Env) (*cel.Env, error) {
	decls := env.Functions()
	var opts []cel.EnvOption
	for _, g := range sizeGuards {
		fn, ok := decls[g.function]
		if !ok {
			return nil, fmt.Errorf("bounding CEL function %s: not declared", g.function)
		}
		bindings, err := fn.Bindings()
		if err != nil {
			return nil, fmt.Errorf("bounding CEL function %s: %w", g.function, err)
		}
		var impl *functions.Overload
		for _, b := range bindings {
			if b.Operator == g.overload {
				impl = b
			}
		}
		var found bool
		for _, o := range fn.OverloadDecls() {
			if o.ID() != g.overload {
				continue
			}
			found = true
			call := callOf(impl)
			if call == nil {
				return nil, fmt.Errorf("bounding CEL function %s: overload %s has no binding", g.function, g.overload)
			}
			check := g.check
			binding := cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				for _, a := range args {
					if types.IsUnknownOrError(a) {
						return call(args)
					}
				}
				if err := check(args); err != nil {
					return types.WrapErr(err)
				}
				return call(args)
			})
			decl := cel.Overload
			if o.IsMemberFunction() {
				decl = cel.MemberOverload
			}
			opts = append(opts, cel.Function(g.function, decl(o.ID(), o.ArgTypes(), o.ResultType(), binding)))
		}
		if !found {
			return nil, fmt.Errorf("bounding CEL function %s: no overload %s", g.function, g.overload)
		}
	}
	return env.Extend(opts...)
}

// callOf is an overload's binding as a call on its arguments.
func callOf(o *functions.Overload) func([]ref.Val) ref.Val {
	switch {
	case o == nil:
		return nil
	case o.Function != nil:
		return func(a []ref.Val) ref.Val { return o.Function(a...) }
	case o.Binary != nil:
		return func(a []ref.Val) ref.Val { return o.Binary(a[0], a[1]) }
	case o.Unary != nil:
		return func(a []ref.Val) ref.Val { return o.Unary(a[0]) }
	}
	return nil
}

func str(v ref.Val) string {
	s, _ := v.(types.String)
	return string(s)
}

func byt(v ref.Val) []byte {
	b, _ := v.(types.Bytes)
	return b
}

func listLen(v ref.Val) int {
	l, ok := v.(traits.Lister)
	if !ok {
		return 0
	}
	n, _ := l.Size().(types.Int)
	return int(n)
}

func maxBytes(fn string, n int) error {
	if n > MaxValueSize || n < 0 {
		return fmt.Errorf("%s: the result would be larger than %s", fn, sizeText(MaxValueSize))
	}
	return nil
}

func maxCount(fn string, n int) error {
	if n > maxElements || n < 0 {
		return fmt.Errorf("%s: the result would have more than %d elements", fn, maxElements)
	}
	return nil
}

// replacedSize is the length of s with (up to n, all when negative)
// occurrences of old replaced by new.
func replacedSize(s, old, new string, n int64) int {
	count := 0
	if old == "" {
		count = utf8.RuneCountInString(s) + 1
	} else if len(new) > len(old) {
		count = strings.Count(s, old)
	}
	if n >= 0 && int64(count) > n {
		count = int(n)
	}
	grow := len(new) - len(old)
	if grow <= 0 {
		return len(s)
	}
	if count > 0 && grow > (MaxValueSize+1)/count+1 {
		return MaxValueSize + 1
	}
	return len(s) + count*grow
}

// quotedSize is the length of strings.quote's result: an escaped byte takes
// two to four bytes, an invalid UTF-8 byte becomes a three-byte U+FFFD.
func quotedSize(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			n += 3
		}
	}
	return n
}

// joinedSize is the length of the list's strings joined by sep.
func joinedSize(list ref.Val, sep string) int {
	l, ok := list.(traits.Lister)
	if !ok {
		return 0
	}
	n := listLen(list)
	size := 0
	for i := 0; i < n; i++ {
		if i > 0 {
			size += len(sep)
		}
		size += len(str(l.Get(types.Int(i))))
		if size > MaxValueSize {
			return size
		}
	}
	return size
}

// formattedSize bounds the length of format's result: the format, what its
// arguments print (deeply) and the widths of precisions (%.1000000f).
func formattedSize(format string, args ref.Val) int {
	size := len(format) + valueSize(args, MaxValueSize+1)
	for i := strings.IndexByte(format, '%'); i >= 0 && i+1 < len(format); {
		rest := format[i+1:]
		if rest[0] == '.' {
			j := 1
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			p, err := strconv.Atoi(rest[1:j])
			if err != nil || p > MaxValueSize {
				return MaxValueSize + 1
			}
			size += p
		}
		next := strings.IndexByte(rest, '%')
		if next < 0 {
			break
		}
		i += next + 1
	}
	return size
}

// splitCount is the number of pieces split would make.
func splitCount(s, sep string) int {
	if sep == "" {
		return utf8.RuneCountInString(s)
	}
	return strings.Count(s, sep) + 1
}

// flatCount counts the elements flatten would make, up to limit.
func flatCount(v ref.Val, depth int64, limit int) int {
	l, ok := v.(traits.Lister)
	if !ok {
		return 1
	}
	n := listLen(v)
	if depth <= 0 {
		return n
	}
	count := 0
	for i := 0; i < n && count <= limit; i++ {
		count += flatCount(l.Get(types.Int(i)), depth-1, limit-count)
	}
	return count
}

// valueSize is about the number of bytes v takes written out (as format and
// JSON write it), counted deeply up to limit: a list that holds one big list
// a thousand times is a thousand times as big.
func valueSize(v ref.Val, limit int) int {
	switch x := v.(type) {
	case types.String:
		return len(x) + 2
	case types.Bytes:
		return len(x)*4/3 + 4
	case traits.Lister:
		n := listLen(v)
		size := 2
		for i := 0; i < n && size <= limit; i++ {
			size += 1 + valueSize(x.Get(types.Int(i)), limit-size)
		}
		return size
	case traits.Mapper:
		size := 2
		it := x.Iterator()
		for it.HasNext() == types.True && size <= limit {
			k := it.Next()
			size += 2 + valueSize(k, limit-size) + valueSize(x.Get(k), limit-size)
		}
		return size
	}
	return 24
}
