package report

import (
	"encoding/json"
	"strings"
	"time"
)

// decodeEvent reads one line of events.jsonl into ev as json.Unmarshal
// does. A run's report reads every event of the run when it ends, two for
// each of its steps, and json.Unmarshal took 6 µs each (a third of a
// report at 1,000 components); most lines are flat objects of plain
// strings, numbers and booleans, which are read here directly. Any other
// line — a value with an escape, an array or an object, a key that only
// differs in case from a field's — is left to json.Unmarshal, so that the
// result is always the same (FuzzDecodeEvent).
func decodeEvent(line []byte, ev *event) error {
	if ok := decodeFlatEvent(line, ev); ok {
		return nil
	}
	*ev = event{}
	return json.Unmarshal(line, ev)
}

// eventFields are the keys decodeFlatEvent sets; encoding/json matches keys
// to fields without regard to case.
var eventFields = []string{"time", "event", "step", "component", "status", "reason", "warning", "info", "name", "value", "secret", "components"}

// decodeFlatEvent decodes a line that is one object of string, number,
// boolean and null values without escapes; false for anything else, with
// ev left partly set.
func decodeFlatEvent(line []byte, ev *event) bool {
	s := string(line)
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipSpace(s, i+1) == len(s)
	}
	for {
		key, next, ok := plainString(s, i)
		if !ok {
			return false
		}
		i = skipSpace(s, next)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i = skipSpace(s, i+1)
		if i >= len(s) {
			return false
		}
		switch c := s[i]; {
		case c == '"':
			val, next, ok := plainString(s, i)
			if !ok || !setEventString(ev, key, val) {
				return false
			}
			i = next
		case c == 't' || c == 'f' || c == 'n':
			word := ""
			for _, w := range []string{"true", "false", "null"} {
				if strings.HasPrefix(s[i:], w) {
					word = w
				}
			}
			if word == "" || !setEventWord(ev, key, word) {
				return false
			}
			i += len(word)
		case c == '-' || c >= '0' && c <= '9':
			end := i
			for end < len(s) && strings.IndexByte("+-.eE0123456789", s[end]) >= 0 {
				end++
			}
			// Only keys of no field may hold numbers (duration_ms): a
			// number in a field of ours is json.Unmarshal's error to make.
			if isEventField(key) || !json.Valid([]byte(s[i:end])) {
				return false
			}
			i = end
		default:
			return false
		}
		i = skipSpace(s, i)
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case ',':
			i = skipSpace(s, i+1)
		case '}':
			return skipSpace(s, i+1) == len(s)
		default:
			return false
		}
	}
}

// setEventString sets the field of key to a string value; false when
// json.Unmarshal must decide (a time it cannot parse the same way, a
// string in a field that holds no string, a key of another case).
func setEventString(ev *event, key, val string) bool {
	switch key {
	case "time":
		// As time.Time's UnmarshalJSON reads it (the same strict RFC 3339).
		var t time.Time
		if t.UnmarshalText([]byte(val)) != nil {
			return false
		}
		ev.Time = t
	case "event":
		ev.Event = val
	case "step":
		ev.Step = val
	case "component":
		ev.Component = val
	case "status":
		ev.Status = val
	case "reason":
		ev.Reason = val
	case "warning":
		ev.Warning = val
	case "info":
		ev.Info = val
	case "name":
		ev.Name = val
	case "value":
		v := val
		ev.Value = &v
	default:
		return !isEventField(key)
	}
	return true
}

// setEventWord sets the field of key to true, false or null as
// json.Unmarshal does; false when it must decide.
func setEventWord(ev *event, key, word string) bool {
	switch {
	case word == "null":
		// null leaves a field as it is, but for a pointer or a slice,
		// which it sets to nil.
		switch key {
		case "value":
			ev.Value = nil
		case "components":
			ev.Components = nil
		default:
			return key == strings.ToLower(key) || !isEventField(key)
		}
		return true
	case key == "secret":
		ev.Secret = word == "true"
		return true
	}
	return !isEventField(key)
}

// isEventField reports a key json.Unmarshal would match to a field.
func isEventField(key string) bool {
	for _, f := range eventFields {
		if strings.EqualFold(key, f) {
			return true
		}
	}
	return false
}

// plainString reads the JSON string at s[i]: its text and where it ends;
// false for one with an escape or a control character, or not closed.
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			// Escapes, and bytes that may be invalid UTF-8 (which
			// json.Unmarshal replaces), are its to read.
			return "", i, false
		}
	}
	return "", i, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}
