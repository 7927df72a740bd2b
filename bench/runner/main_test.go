package main

import (
	"fmt"
	"slices"
	"testing"
)

// TestOrder checks that every tool takes every place equally often and, with
// three tools, follows every other tool equally often over six rounds.
func TestOrder(t *testing.T) {
	if got := fmt.Sprint(order(2, -1), order(2, 0), order(2, 1), order(2, 2)); got != "[1 0] [0 1] [1 0] [0 1]" {
		t.Errorf("two tools: %s", got)
	}
	var seen [][]int
	places := map[[2]int]int{}
	follows := map[[2]int]int{}
	for r := range 6 {
		o := order(3, r)
		if slices.ContainsFunc(seen, func(s []int) bool { return slices.Equal(s, o) }) {
			t.Errorf("round %d repeats %v", r, o)
		}
		seen = append(seen, o)
		for i, tool := range o {
			places[[2]int{tool, i}]++
			if i > 0 {
				follows[[2]int{o[i-1], tool}]++
			}
		}
	}
	for k, n := range places {
		if n != 2 {
			t.Errorf("tool %d in place %d %d times", k[0], k[1], n)
		}
	}
	for k, n := range follows {
		if n != 2 {
			t.Errorf("tool %d right after %d %d times", k[1], k[0], n)
		}
	}
}

func TestSpread(t *testing.T) {
	if got := spreadOf([]float64{2, 1, 4, 3}).String(); got != "1.00/2.50/4.00" {
		t.Errorf("got %s", got)
	}
	if got := spreadOf(nil).String(); got != "-" {
		t.Errorf("got %s", got)
	}
}
