package state

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// shapeProblem is a place where a state document's shape is not the one
// State has: a field it does not know, a value of the wrong kind.
type shapeProblem struct {
	line, col int
	field     string // the path: components.app.order
	msg       string
	unknown   bool // a field the State does not have
}

// maxShapeProblems bounds what a broken state's message lists.
const maxShapeProblems = 20

// shapeProblems compares a state document with State's fields, in the
// words of the manifests' messages and in document order, all of them: the
// YAML decoder stops at the first, names an unknown field picked from a
// map, and speaks of Go types ("Go struct field State.Components of type
// int"). None quotes a value: a state holds secrets. Nothing when the
// document does not parse, or has the shape of a State.
func shapeProblems(data []byte) (probs []shapeProblem) {
	defer func() {
		// The parser, like the decoder, may fail in a panic of its own:
		// then the decoder's message is all there is.
		if recover() != nil {
			probs = nil
		}
	}()
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil
	}
	docs := withoutDirectives(f.Docs)
	if len(docs) != 1 {
		return nil
	}
	if !checkShape(docs[0].Body, reflect.TypeOf(State{}), "", &probs, 0) {
		return nil
	}
	sort.SliceStable(probs, func(i, j int) bool {
		if probs[i].line != probs[j].line {
			return probs[i].line < probs[j].line
		}
		return probs[i].col < probs[j].col
	})
	return probs
}

var timeType = reflect.TypeOf(time.Time{})

// checkShape checks n against t; path names n. It returns false when it
// cannot tell: a tag (gantry writes none) may make the decoder read a value
// in ways of its own.
func checkShape(n ast.Node, t reflect.Type, path string, probs *[]shapeProblem, depth int) bool {
	if n == nil || depth > 64 {
		return true
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		return checkShape(v.Value, t, path, probs, depth+1)
	case *ast.TagNode:
		return false
	case *ast.AliasNode, *ast.NullNode, *ast.CommentGroupNode:
		return true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	problem := func(msg string) {
		p := n.GetToken().Position
		*probs = append(*probs, shapeProblem{line: p.Line, col: p.Column, field: path, msg: msg})
	}
	expect := func(what string) { problem("expected " + what + ", got " + shapeOf(n)) }
	switch {
	case t == timeType:
		switch n.(type) {
		case *ast.StringNode, *ast.LiteralNode:
		default:
			expect("a time (2006-01-02T15:04:05Z)")
		}
	case t.Kind() == reflect.String:
		if !isScalar(n) {
			expect("a string")
		}
	case t.Kind() == reflect.Interface:
	case t.Kind() == reflect.Bool:
		if _, ok := n.(*ast.BoolNode); !ok {
			expect("true or false")
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		if !takesAsInteger(n) {
			expect("an integer")
		}
	case t.Kind() == reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			expect("a list")
			return true
		}
		for i, item := range seq.Values {
			if !checkShape(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), probs, depth+1) {
				return false
			}
		}
	case t.Kind() == reflect.Map || t.Kind() == reflect.Struct:
		entries, ok := mappingEntries(n)
		if !ok {
			expect("a mapping")
			return true
		}
		for _, e := range entries {
			key := e.Key.GetToken().Value
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if isTagged(e.Key) || isTagged(e.Value) {
				return false
			}
			if _, null := e.Value.(*ast.NullNode); null || e.Value == nil {
				continue // the decoder passes over a field of no value, known or not
			}
			if t.Kind() == reflect.Map {
				if !checkShape(e.Value, t.Elem(), sub, probs, depth+1) {
					return false
				}
				continue
			}
			if _, text := e.Key.(*ast.StringNode); !text {
				continue // the decoder passes over 0:, true:, ~: in a struct
			}
			ft, known := fieldByTag(t, key)
			if !known {
				p := e.Key.GetToken().Position
				*probs = append(*probs, shapeProblem{line: p.Line, col: p.Column, field: path, msg: fmt.Sprintf("unknown field %q", key), unknown: true})
				continue
			}
			if !checkShape(e.Value, ft, sub, probs, depth+1) {
				return false
			}
		}
	}
	return true
}

// mappingEntries are the entries of a mapping node: goccy gives a mapping
// of one entry as the entry itself.
func mappingEntries(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch v := n.(type) {
	case *ast.MappingNode:
		return v.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}, true
	}
	return nil, false
}

// fieldByTag finds the field of struct t its YAML tag names key.
func fieldByTag(t reflect.Type, key string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == key && name != "-" {
			return f.Type, true
		}
	}
	return nil, false
}

// takesAsInteger reports whether the decoder reads n into an integer
// field: an integer, a number (it drops the fraction) or a string that
// spells one, not a boolean, an infinity or words. The shape check is no
// stricter than the decoder.
func takesAsInteger(n ast.Node) bool {
	switch v := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		return true
	case *ast.StringNode:
		_, err := strconv.ParseFloat(v.Value, 64)
		_, ierr := strconv.ParseInt(v.Value, 0, 64)
		return err == nil || ierr == nil
	}
	return false
}

// isTagged reports whether n carries a tag (!t), through an anchor.
func isTagged(n ast.Node) bool {
	for {
		switch v := n.(type) {
		case *ast.TagNode:
			return true
		case *ast.AnchorNode:
			n = v.Value
		default:
			return false
		}
	}
}

// isScalar reports whether n is a single value, not a mapping or a list.
func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode:
		return false
	}
	return true
}

// shapeOf names what a node is, never what it holds.
func shapeOf(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	}
	return "a string"
}

// agrees reports whether the decoder's error (its "[line:col] " first) is
// at one of the problems: the shape check is then telling of what the
// decoder refused, not of one of its quirks (it passes over some keys a
// mapping of its own parser holds).
func agrees(probs []shapeProblem, decodeErr string) bool {
	m := yamlPos.FindStringSubmatch(decodeErr)
	if m == nil {
		return false
	}
	for _, p := range probs {
		if strconv.Itoa(p.line) == m[1] && strconv.Itoa(p.col) == m[2] {
			return true
		}
	}
	return false
}

// shapeError is the error of a state whose shape is wrong: every problem
// on a line of its own, as file:line:col: field: message.
func shapeError(path string, probs []shapeProblem) error {
	var b strings.Builder
	for i, p := range probs {
		if i == maxShapeProblems {
			fmt.Fprintf(&b, "\n… and %d more", len(probs)-i)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s:%d:%d: the state is not valid: ", path, p.line, p.col)
		if p.field != "" {
			b.WriteString(p.field + ": ")
		}
		b.WriteString(p.msg)
	}
	for _, p := range probs {
		if p.unknown {
			// The format's version says nothing of fields a newer gantry
			// adds beside the old ones: after a downgrade, this is it.
			fmt.Fprintf(&b, "\n(a newer gantry may have written %s: use that version of gantry or a later one)", path)
			break
		}
	}
	return fmt.Errorf("%s", b.String())
}
