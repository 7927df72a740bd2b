package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits bound a step's run: each attempt ends after Timeout (its process
// group stopped as a cancelled one is), and a failed attempt is tried again
// as Retries say. They are part of the step's spec: the step's runner
// applies them, and the executor knows nothing of them.
type Limits struct {
	// Timeout is how long one attempt may take, in seconds; 0: no limit.
	Timeout float64  `json:"timeout,omitempty"`
	Retries *Retries `json:"retries,omitempty"`
}

// Retries say how often a failed step is tried again.
type Retries struct {
	// Attempts in all, the first included.
	Attempts int `json:"attempts"`
	// Backoff is the wait before the second attempt, in seconds; it doubles
	// after each further failure.
	Backoff float64 `json:"backoff"`
	// ExitCodes and Patterns (RE2, matched against the attempt's output and
	// error) are the failures worth another attempt; without either, every
	// failure is.
	ExitCodes []int    `json:"exitCodes,omitempty"`
	Patterns  []string `json:"patterns,omitempty"`
}

// TimeoutDuration is Timeout as a duration.
func (l *Limits) TimeoutDuration() time.Duration {
	if l == nil {
		return 0
	}
	return time.Duration(l.Timeout * float64(time.Second))
}

// Seconds writes a number of seconds as a duration people read: 1s, 1m30s.
func Seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).String()
}

// String describes the limits for a text plan: "timeout 1s, 3 attempts
// (backoff 1s; when exit 75 or /refused/)".
func (l *Limits) String() string {
	if l == nil {
		return ""
	}
	var parts []string
	if l.Timeout > 0 {
		parts = append(parts, "timeout "+Seconds(l.Timeout))
	}
	if r := l.Retries; r != nil {
		t := strconv.Itoa(r.Attempts) + " attempts (backoff " + Seconds(r.Backoff)
		var when []string
		for _, c := range r.ExitCodes {
			when = append(when, fmt.Sprintf("exit %d", c))
		}
		for _, p := range r.Patterns {
			when = append(when, "/"+p+"/")
		}
		if len(when) > 0 {
			t += "; when " + strings.Join(when, " or ")
		}
		parts = append(parts, t+")")
	}
	return strings.Join(parts, ", ")
}

// limitsOf are the limits of a step's spec, nil for specs without any.
func limitsOf(n *Node) *Limits {
	switch s := n.Spec.(type) {
	case Verb:
		return s.Limits
	case Injected:
		return s.Step.Limits
	case Entry:
		return s.Limits
	}
	return nil
}
