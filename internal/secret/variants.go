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
	out := []string{
		url.PathEscape(v),
		path,
		url.QueryEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)),
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

// maxEncoded is the longest value whose encodings are masked.
const maxEncoded = 64 << 10
