package component

import (
	"fmt"
	"reflect"
)

// boundedSprintf is printf for templates: fmt.Sprintf after checking that
// what it builds stays under maxValueBytes. fmt builds all its output before
// anything can stop it, and a width pads every element of a list, so
// "%999999v" of a long list would be gigabytes.
func boundedSprintf(format string, args ...any) (string, error) {
	if err := fits("printf", printfSize(format, args)); err != nil {
		return "", err
	}
	return fmt.Sprintf(format, args...), nil
}

// boundedSprint is print: fmt.Sprint after the same check.
func boundedSprint(args ...any) (string, error) {
	if err := fits("print", sprintSize(args)); err != nil {
		return "", err
	}
	return fmt.Sprint(args...), nil
}

// boundedSprintln is println: fmt.Sprintln after the same check.
func boundedSprintln(args ...any) (string, error) {
	if err := fits("println", sprintSize(args)+int64(len(args))+1); err != nil {
		return "", err
	}
	return fmt.Sprintln(args...), nil
}

// printedSize bounds what fmt prints for one operand: its content (escaped,
// at worst 4 bytes a byte, when escaping), and for each scalar in it the
// padding and precision and the punctuation around it.
func printedSize(v any, pad int64, escaping bool) int64 {
	m, _ := measure(reflect.ValueOf(v), maxValueBytes)
	factor := int64(1)
	if escaping {
		factor = 4
	}
	return factor*m.size + max(m.leaves, 1)*(pad+2)
}

func sprintSize(args []any) int64 {
	var size int64
	for _, a := range args {
		size += printedSize(a, 0, false) + 1
	}
	return size
}

// printfSize bounds what fmt.Sprintf(format, args...) builds. It reads the
// format as fmt does, far enough to know each directive's width and
// precision (fmt refuses those above a million) and which operand it prints;
// once explicit argument indexes ([n]) appear, it assumes the largest.
func printfSize(format string, args []any) int64 {
	const maxPad = 1_000_000
	size := int64(len(format))
	next, reordered := 0, false
	operand := func(pad int64, escaping bool) int64 {
		defer func() { next++ }()
		var m int64
		for i, a := range args {
			if reordered || i == next {
				m = max(m, printedSize(a, pad, escaping))
			}
		}
		return m + 32 // or %!v(MISSING), %!v(BADINDEX)
	}
	number := func(i int) (int64, int) {
		var n int64
		for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			n = min(n*10+int64(format[i]-'0'), maxPad)
		}
		return n, i
	}
	skipIndex := func(i int) int {
		if i < len(format) && format[i] == '[' {
			reordered = true
			for i < len(format) && format[i] != ']' {
				i++
			}
			i++
		}
		return i
	}
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		sharp := false
		for i < len(format) && (format[i] == '+' || format[i] == '-' || format[i] == '#' || format[i] == ' ' || format[i] == '0') {
			sharp = sharp || format[i] == '#'
			i++
		}
		i = skipIndex(i)
		var width, prec int64
		if i < len(format) && format[i] == '*' {
			width = maxPad
			operand(0, false)
			i++
		} else {
			width, i = number(i)
		}
		if i < len(format) && format[i] == '.' {
			i = skipIndex(i + 1)
			if i < len(format) && format[i] == '*' {
				prec = maxPad
				operand(0, false)
				i++
			} else {
				prec, i = number(i)
			}
		}
		i = skipIndex(i)
		if i < len(format) && format[i] != '%' {
			escaping := sharp || format[i] == 'q' || format[i] == 'x' || format[i] == 'X'
			size += operand(width+prec, escaping)
		}
	}
	// Operands that no directive took are printed as %!(EXTRA …).
	if !reordered {
		for ; next < len(args); next++ {
			size += printedSize(args[next], 0, false) + 32
		}
	}
	return size
}
