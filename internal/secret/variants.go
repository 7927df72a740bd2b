package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
)

// encodings are the forms a secret takes on its way into text gantry
// shows without anyone meaning to show it: an argument written
// ${db.password/base64} or ${db.password/json}, a URL that an error quotes
// escaped (Get "http://host/p/Tk%3C…"). The masker masks them as it masks
// the value. What an expression or a template computes from a secret
// (upper case, a part of it) is not here: the values computed are made
// secrets themselves where gantry computes them (parameters, outputs,
// step arguments). A value past maxEncoded has none: a certificate bundle
// is not passed around encoded, and its encodings would cost the masker
// several times its size.
func encodings(v string) []string {
	if len(v) > maxEncoded {
		return nil
	}
	path := (&url.URL{Path: v}).EscapedPath()
	quoted, _ := json.Marshal(v) // <, > and & escaped, as encoding/json writes them
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	unescapedHTML := strings.TrimSuffix(plain.String(), "\n")
	// RFC 3986's escape of everything but the unreserved characters, a
	// space as %20 (jq's @uri, Python's quote(s, safe="")), and Python's
	// default quote(s), which keeps the slashes; in lower-case hex too.
	uri := strings.ReplaceAll(url.QueryEscape(v), "+", "%20")
	b64 := base64.StdEncoding.EncodeToString([]byte(v))
	// echo "$TOKEN" | base64 encodes the newline too.
	b64nl := base64.StdEncoding.EncodeToString([]byte(v + "\n"))
	out := []string{
		url.PathEscape(v),
		path,
		url.QueryEscape(v),
		uri,
		strings.ReplaceAll(uri, "%2F", "/"),
		lowerHex(uri),
		b64,
		// As base64(1) (76 columns) and openssl base64 (64) write it:
		// lines the masker masks one by one.
		wrap(b64, 76),
		wrap(b64, 64),
		b64nl,
		wrap(b64nl, 76),
		wrap(b64nl, 64),
		base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)),
		base64.RawURLEncoding.EncodeToString([]byte(v)),
		string(quoted[1 : len(quoted)-1]),
		unescapedHTML[1 : len(unescapedHTML)-1],
	}
	kept := out[:0]
	for _, e := range out {
		if e != v {
			kept = append(kept, e)
		}
	}
	return kept
}

// wrap cuts s into lines of n characters, as base64 tools write long
// encodings.
func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n])
		b.WriteByte('\n')
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// lowerHex writes the %XX escapes of s in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = toLower(b[i+1]), toLower(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// maxEncoded is the longest value whose encodings are masked.
const maxEncoded = 64 << 10
