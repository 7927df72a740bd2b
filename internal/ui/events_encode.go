package ui

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendEvent appends ev as one JSON line exactly as encoding/json writes
// an Event (the same fields, order, omissions and escapes): a run of
// 10,000 components writes 50,000 events, and reflection cost a fifth of
// a second of an unchanged --resume. ok is false for what only
// encoding/json can write (a time outside years 0-9999, which it refuses).
func appendEvent(b []byte, ev *Event) (_ []byte, ok bool) {
	if y := ev.Time.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, off := ev.Time.Zone(); off <= -24*3600 || off >= 24*3600 {
		return b, false // refused by encoding/json too
	}
	b = append(b, `{"time":"`...)
	b = ev.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","event":`...)
	b = appendJSONString(b, ev.Event)
	b = optString(b, "run", ev.Run)
	b = optString(b, "stack", ev.Stack)
	b = optString(b, "verb", ev.Verb)
	b = optString(b, "step", ev.Step)
	b = optString(b, "kind", ev.Kind)
	b = optString(b, "label", ev.Label)
	b = optString(b, "component", ev.Component)
	b = optString(b, "status", ev.Status)
	if ev.DurationMS != nil {
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendInt(b, *ev.DurationMS, 10)
	}
	b = optString(b, "reason", ev.Reason)
	b = optString(b, "warning", ev.Warning)
	if ev.Line != nil {
		b = append(b, `,"line":`...)
		b = appendJSONString(b, *ev.Line)
	}
	b = optString(b, "name", ev.Name)
	if ev.Value != nil {
		b = append(b, `,"value":`...)
		b = appendJSONString(b, *ev.Value)
	}
	if ev.Secret {
		b = append(b, `,"secret":true`...)
	}
	if len(ev.Components) > 0 {
		b = append(b, `,"components":[`...)
		for i, c := range ev.Components {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendJSONString(b, c.Name)
			b = append(b, `,"verb":`...)
			b = appendJSONString(b, c.Verb)
			b = append(b, `,"status":`...)
			b = appendJSONString(b, c.Status)
			b = append(b, `,"duration_ms":`...)
			b = strconv.AppendInt(b, c.DurationMS, 10)
			b = optString(b, "reason", c.Reason)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = optString(b, "log_dir", ev.LogDir)
	return append(b, "}\n"...), true
}

// optString appends a field that encoding/json omits when empty.
func optString(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendJSONString(b, v)
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does with HTML escaping on
// (its default): <, > and & as \u escapes, invalid UTF-8 as \ufffd, and
// U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
