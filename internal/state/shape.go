package state

import (
	"fmt"
	"reflect"
	"sort"
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
}

// maxShapeProblems bounds what a broken state's message lists.
const maxShapeProblems = 20

// shapeProblems compares a state document with State's fields, in the
// words of the manifests' messages and in document order, all of them: the
// YAML decoder stops at the first, names an unknown field picked from a
// map, and speaks of Go types ("Go struct field State.Components of type
// int"). None quotes a value: a state holds secrets. Nothing when the
// document does not parse, or has the shape of a State.
func shapeProblems(data []byte) []shapeProblem {
	f, err := parser.ParseBytes(data, 0)
	if err != nil || len(f.Docs) != 1 {
		return nil
	}
	var probs []shapeProblem
	checkShape(f.Docs[0].Body, reflect.TypeOf(State{}), "", &probs, 0)
	sort.SliceStable(probs, func(i, j int) bool {
		if probs[i].line != probs[j].line {
			return probs[i].line < probs[j].line
		}
		return probs[i].col < probs[j].col
	})
	return probs
}

var timeType = reflect.TypeOf(time.Time{})

// checkShape checks n against t; path names n.
func checkShape(n ast.Node, t reflect.Type, path string, probs *[]shapeProblem, depth int) {
	if n == nil || depth > 64 {
		return
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		checkShape(v.Value, t, path, probs, depth+1)
		return
	case *ast.TagNode:
		checkShape(v.Value, t, path, probs, depth+1)
		return
	case *ast.AliasNode, *ast.NullNode, *ast.CommentGroupNode:
		return
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
		if !isScalar(n) {
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
		if _, ok := n.(*ast.IntegerNode); !ok {
			expect("an integer")
		}
	case t.Kind() == reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			expect("a list")
			return
		}
		for i, item := range seq.Values {
			checkShape(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), probs, depth+1)
		}
	case t.Kind() == reflect.Map || t.Kind() == reflect.Struct:
		entries, ok := mappingEntries(n)
		if !ok {
			expect("a mapping")
			return
		}
		for _, e := range entries {
			key := e.Key.GetToken().Value
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if t.Kind() == reflect.Map {
				checkShape(e.Value, t.Elem(), sub, probs, depth+1)
				continue
			}
			ft, known := fieldByTag(t, key)
			if !known {
				p := e.Key.GetToken().Position
				*probs = append(*probs, shapeProblem{line: p.Line, col: p.Column, field: path, msg: fmt.Sprintf("unknown field %q", key)})
				continue
			}
			checkShape(e.Value, ft, sub, probs, depth+1)
		}
	}
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
	return fmt.Errorf("%s", b.String())
}
