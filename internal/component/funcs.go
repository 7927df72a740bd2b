package component

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/goccy/go-yaml"
	"golang.org/x/crypto/bcrypt"
)

// funcMap is the function set of Go templates: the commonly used part of
// sprig, with sprig's names and argument orders, so that templates written for
// Helm or the Hub CLI render the same.
func funcMap() template.FuncMap {
	return template.FuncMap{
		// defaults and logic
		"default":  defaultFn,
		"empty":    empty,
		"coalesce": coalesce,
		"ternary":  func(a, b any, c bool) any { return map[bool]any{true: a, false: b}[c] },
		"required": func(msg string, v any) (any, error) {
			if empty(v) {
				return nil, errors.New(msg)
			}
			return v, nil
		},
		"fail": func(msg string) (string, error) { return "", errors.New(msg) },
		// strings
		"upper":      strings.ToUpper,
		"lower":      strings.ToLower,
		"title":      title,
		"trim":       strings.TrimSpace,
		"trimAll":    func(cut, s string) string { return strings.Trim(s, cut) },
		"trimPrefix": func(p, s string) string { return strings.TrimPrefix(s, p) },
		"trimSuffix": func(p, s string) string { return strings.TrimSuffix(s, p) },
		"replace":    replace,
		"contains":   func(sub, s string) bool { return strings.Contains(s, sub) },
		"hasPrefix":  func(p, s string) bool { return strings.HasPrefix(s, p) },
		"hasSuffix":  func(p, s string) bool { return strings.HasSuffix(s, p) },
		"repeat":     repeat,
		"quote":      func(v ...any) (string, error) { return joinMapped("quote", v, strconv.Quote) },
		"squote": func(v ...any) (string, error) {
			return joinMapped("squote", v, func(s string) string { return "'" + s + "'" })
		},
		"indent": indent,
		"nindent": func(n int, s string) (string, error) {
			s, err := indent(n, s)
			return "\n" + s, err
		},
		"split":     split,
		"splitList": splitList,
		"join":      join,
		"toString":  func(v any) (string, error) { return boundedSprint(v) },
		"cat":       func(v ...any) (string, error) { return joinMapped("cat", v, func(s string) string { return s }) },
		"substr":    substr,
		"trunc":     func(n int, s string) string { return substr(0, n, s) },
		// paths
		"base":  filepath.Base,
		"dir":   filepath.Dir,
		"ext":   filepath.Ext,
		"clean": filepath.Clean,
		"isAbs": filepath.IsAbs,
		// encodings
		"b64enc": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"b64dec": b64dec,
		"toJson": toJSON,
		"toPrettyJson": func(v any) (string, error) {
			b, err := json.MarshalIndent(v, "", "  ")
			return string(b), err
		},
		"fromJson":  fromJSON,
		"toYaml":    toYAML,
		"sha256sum": func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) },
		"sha1sum":   func(s string) string { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]) },
		// the Hub CLI's own function (its dex component hashes a password)
		"bcrypt": bcryptHash,
		// lists and dicts
		"list":  func(v ...any) []any { return v },
		"dict":  dict,
		"keys":  keys,
		"has":   func(needle any, list []any) bool { return indexOf(list, needle) >= 0 },
		"first": func(l []any) any { return at(l, 0) },
		"last":  func(l []any) any { return at(l, len(l)-1) },
		"uniq":  uniq,
		"sortAlpha": func(l []string) []string {
			out := append([]string(nil), l...)
			sort.Strings(out)
			return out
		},
		// numbers
		"int":   toInt,
		"atoi":  func(s string) (int, error) { return strconv.Atoi(strings.TrimSpace(s)) },
		"add":   func(a, b any) (int64, error) { return arith(a, b, func(x, y int64) int64 { return x + y }) },
		"sub":   func(a, b any) (int64, error) { return arith(a, b, func(x, y int64) int64 { return x - y }) },
		"mul":   func(a, b any) (int64, error) { return arith(a, b, func(x, y int64) int64 { return x * y }) },
		"div":   div,
		"mod":   mod,
		"max":   func(a, b any) (int64, error) { return arith(a, b, func(x, y int64) int64 { return max(x, y) }) },
		"min":   func(a, b any) (int64, error) { return arith(a, b, func(x, y int64) int64 { return min(x, y) }) },
		"until": until,
		// text/template's own printing and escaping, bounded
		"print":    boundedSprint,
		"printf":   boundedSprintf,
		"println":  boundedSprintln,
		"html":     template.HTMLEscaper,
		"js":       template.JSEscaper,
		"urlquery": template.URLQueryEscaper,
	}
}

// bcryptHash is the Hub CLI's template function bcrypt: the bcrypt hash of
// s at the default cost (10), in the modular crypt format $2a$10$… that
// dex and htpasswd read. The salt is random, so every render gives another
// hash of the same value. A value longer than bcrypt takes is refused
// rather than cut (the Hub's older bcrypt hashed its first 72 bytes only,
// silently). No error tells s, nor its length: it is a password.
func bcryptHash(s string) (string, error) {
	if len(s) > maxBcryptBytes {
		// A bound, as the render's: its message is shown even where a
		// secret withholds a function's own (it tells nothing of s).
		return "", limitErrorf("bcrypt: the value is longer than the %d bytes bcrypt hashes", maxBcryptBytes)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(s), bcrypt.DefaultCost)
	return string(h), err
}

// maxBcryptBytes is the longest value bcrypt hashes whole.
const maxBcryptBytes = 72

func defaultFn(def any, given ...any) any {
	if len(given) == 0 || empty(given[0]) {
		return def
	}
	return given[0]
}

// empty follows sprig: zero values, empty strings and collections, false.
func empty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		return rv.Len() == 0
	case reflect.Bool:
		return !rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return rv.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

func coalesce(v ...any) any {
	for _, x := range v {
		if !empty(x) {
			return x
		}
	}
	return nil
}

func title(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// joinMapped prints each non-nil value, maps it and joins the results with
// spaces, refusing to build more than maxValueBytes.
func joinMapped(what string, v []any, f func(string) string) (string, error) {
	parts := make([]string, 0, len(v))
	var size int64
	for _, x := range v {
		if x == nil {
			continue
		}
		p, err := boundedSprint(x)
		if err != nil {
			return "", err
		}
		p = f(p)
		if size += int64(len(p)) + 1; size > maxValueBytes {
			return "", fits(what, size)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " "), nil
}

func indent(n int, s string) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("indent: %d is negative", n)
	}
	lines := int64(strings.Count(s, "\n")) + 1
	if err := fits("indent", int64(len(s))+mulSat(lines, int64(n))); err != nil {
		return "", err
	}
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad), nil
}

func replace(old, new, s string) (string, error) {
	count := int64(strings.Count(s, old))
	if err := fits("replace", int64(len(s))+mulSat(count, int64(len(new)))); err != nil {
		return "", err
	}
	return strings.ReplaceAll(s, old, new), nil
}

// parts bounds strings.Split: each part counts nodeOverhead besides its text.
func parts(what, sep, s string) error {
	return fits(what, int64(len(s))+mulSat(int64(strings.Count(s, sep))+1, 2*nodeOverhead))
}

func splitList(sep, s string) ([]string, error) {
	if err := parts("splitList", sep, s); err != nil {
		return nil, err
	}
	return strings.Split(s, sep), nil
}

// split follows sprig: a map _0, _1, … of the parts.
func split(sep, s string) (map[string]string, error) {
	if err := parts("split", sep, s); err != nil {
		return nil, err
	}
	m := map[string]string{}
	for i, p := range strings.Split(s, sep) {
		m["_"+strconv.Itoa(i)] = p
	}
	return m, nil
}

func join(sep string, v any) (string, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return boundedSprint(v)
	}
	parts := make([]string, rv.Len())
	size := mulSat(int64(len(sep)), int64(rv.Len()))
	for i := range parts {
		p, err := boundedSprint(rv.Index(i).Interface())
		if err != nil {
			return "", err
		}
		if size += int64(len(p)); size > maxValueBytes {
			return "", fits("join", size)
		}
		parts[i] = p
	}
	return strings.Join(parts, sep), nil
}

func substr(start, end int, s string) string {
	if start < 0 {
		start = 0
	}
	if end < 0 || end > len(s) {
		end = len(s)
	}
	if start > end {
		return ""
	}
	return s[start:end]
}

func b64dec(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("b64dec: %w", err)
	}
	return string(b), nil
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func fromJSON(s string) (any, error) {
	// Decoded values take several times their text; the result is measured
	// again once built.
	if err := fits("fromJson", 4*int64(len(s))); err != nil {
		return nil, err
	}
	var v any
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}

func toYAML(v any) (string, error) {
	b, err := yaml.Marshal(v)
	return strings.TrimSuffix(string(b), "\n"), err
}

func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, errors.New("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return m, nil
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func indexOf(l []any, needle any) int {
	for i, x := range l {
		if reflect.DeepEqual(x, needle) {
			return i
		}
	}
	return -1
}

func at(l []any, i int) any {
	if i < 0 || i >= len(l) {
		return nil
	}
	return l[i]
}

// uniq keeps the first of equal elements; elements are told apart by their
// Go syntax (%#v), which for template values (strings, numbers, lists and
// maps, printed sorted) is equality, in time that grows with the list, not
// its square.
func uniq(l []any) []any {
	var out []any
	seen := map[string]bool{}
	for _, x := range l {
		key := fmt.Sprintf("%T\x00%#v", x, x)
		if !seen[key] {
			seen[key] = true
			out = append(out, x)
		}
	}
	return out
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		return int64(x), nil
	case string:
		return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("int: cannot convert %T", v)
}

func arith(a, b any, f func(x, y int64) int64) (int64, error) {
	x, err := toInt(a)
	if err != nil {
		return 0, err
	}
	y, err := toInt(b)
	if err != nil {
		return 0, err
	}
	return f(x, y), nil
}

func div(a, b any) (int64, error) {
	y, err := toInt(b)
	if err == nil && y == 0 {
		return 0, errors.New("div: division by zero")
	}
	return arith(a, b, func(x, y int64) int64 { return x / y })
}

func mod(a, b any) (int64, error) {
	y, err := toInt(b)
	if err == nil && y == 0 {
		return 0, errors.New("mod: division by zero")
	}
	return arith(a, b, func(x, y int64) int64 { return x % y })
}

// maxUntil bounds the list until builds; loops over it cost work besides.
const maxUntil = 100_000

// fits refuses to build a value of size bytes past maxValueBytes.
func fits(what string, size int64) error {
	if size > maxValueBytes {
		return limitErrorf("%s: would build more than %d bytes", what, maxValueBytes)
	}
	return nil
}

// mulSat is a*b for non-negative a and b, saturating instead of wrapping.
func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

func repeat(n int, s string) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("repeat: %d is negative", n)
	}
	if err := fits("repeat", mulSat(int64(n), int64(len(s)))); err != nil {
		return "", err
	}
	return strings.Repeat(s, n), nil
}

func until(n int) ([]int, error) {
	if n > maxUntil {
		return nil, fmt.Errorf("until: %d is more than %d", n, maxUntil)
	}
	out := make([]int, max(n, 0))
	for i := range out {
		out[i] = i
	}
	return out, nil
}
