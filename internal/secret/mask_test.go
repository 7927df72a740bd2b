package secret

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestMasker(t *testing.T) {
	m := NewMasker("s3cret-pass", "abc", "s3cret")
	tests := []struct{ in, want string }{
		{"password is s3cret-pass here", "password is ***** here"},
		{"s3cret and s3cret-pass", "***** and *****"},
		{"abcdef holds abc but is not it", "abcdef holds ***** but is not it"},
		{"conn = user:abc@host", "conn = user:*****@host"},
		{"abc", "*****"},
		{"xabc abcx abc", "xabc abcx *****"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := m.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := m.Value("abc", true); got != Mask {
		t.Errorf("Value(secret) = %q, want the mask", got)
	}
	m.Add("late-secret")
	if got := m.Text("a late-secret"); got != "a *****" {
		t.Errorf("after Add: %q", got)
	}
	var nilMasker *Masker
	if got := nilMasker.Text("x"); got != "x" {
		t.Errorf("nil masker changed text: %q", got)
	}
}

// A secret of several lines (a PEM key read with fromFile) reaches the
// displays and logs one line at a time: every line of it is masked.
func TestMaskerMultiLine(t *testing.T) {
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\r\nBKcwggSjAgEAAoIBAQC7\n}\n-----END PRIVATE KEY-----\n"
	m := NewMasker(key)
	tests := []struct{ in, want string }{
		{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "*****"},
		{"key line: BKcwggSjAgEAAoIBAQC7 here", "key line: ***** here"},
		{"-----END PRIVATE KEY-----", "*****"},
		{"the whole " + key, "the whole *****\n"},
		{"} stays: too short a line to mask on its own", "} stays: too short a line to mask on its own"},
	}
	for _, tt := range tests {
		if got := m.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Values that are yes or no carry nothing of a secret they were computed
// from, and are not masked inside other text.
func TestMaskerBooleans(t *testing.T) {
	m := NewMasker("true", "false", "s3cret")
	if got := m.Text("ready: true, s3cret: false"); got != "ready: true, *****: false" {
		t.Errorf("got %q", got)
	}
	if got := m.Value("true", true); got != Mask {
		t.Errorf("a secret value shown whole is masked: got %q", got)
	}
}

// A line too long to be held back reaches the observers in pieces: a secret
// cut between two pieces is masked in both, and nothing else is.
func TestMaskerPieces(t *testing.T) {
	m := NewMasker("Sup3r-Secret-Pw")
	tests := []struct {
		piece                string
		continued, continues bool
		want                 string
	}{
		{"xxxx Sup3r-Se", false, true, "xxxx *****"},
		{"Sup3r-Secret-Pw alone", false, false, "***** alone"},
		{"cret-Pw yyyy", true, false, "***** yyyy"},
		{"cret-Pw at the start of a new line", false, false, "cret-Pw at the start of a new line"},
		{"ends with Sup", false, false, "ends with Sup"},
		{"S", false, true, "*****"},
		{"up3r-Secret-", true, true, "*****"},
		{"Pw!", true, false, "*****!"},
		{"a whole line", true, true, "a whole line"},
	}
	for i, tt := range tests {
		if got := m.Piece(tt.piece, tt.continued, tt.continues); got != tt.want {
			t.Errorf("%d: Piece(%q, %v, %v) = %q, want %q", i, tt.piece, tt.continued, tt.continues, got, tt.want)
		}
	}
}

// TestMaskerEncodings: a secret's common encodings are masked as the secret
// is — the forms it takes in arguments written ${x/base64} or ${x/json}, in
// a URL an error quotes escaped — and the text around them is kept; what is
// computed from it (upper case) is not an encoding, and a name that holds
// a common password in capitals is left alone.
func TestMaskerEncodings(t *testing.T) {
	const pw = `Tk/<Secret Value&98>"\`
	m := NewMasker(pw)
	for _, text := range []string{
		`Get "http://127.0.0.1:9/p/Tk/%3CSecret%20Value&98%3E%22%5C": refused`,
		"token=" + url.QueryEscape(pw) + "&x=1",
		"b64 " + base64.StdEncoding.EncodeToString([]byte(pw)) + " end",
		"raw " + base64.RawURLEncoding.EncodeToString([]byte(pw)) + " end",
		`{"password":"Tk/<Secret Value&98>\"\\"}`,
		`{"password":"Tk/\u003cSecret Value\u002698\u003e\"\\"}`,
	} {
		got := m.Text(text)
		if !strings.Contains(got, Mask) {
			t.Errorf("Text(%q) = %q: the encoded secret is shown", text, got)
		}
	}
	if got := m.Text(`{"password":"Tk/<Secret Value&98>\"\\"}`); got != `{"password":"*****"}` {
		t.Errorf("JSON: %q, want the quotes kept around the mask", got)
	}
	// Values too short to mask inside text have no encodings masked either.
	if got := NewMasker("ab").Text("YWI= AB"); got != "YWI= AB" {
		t.Errorf("short secret: %q", got)
	}
	if got := NewMasker("postgres").Text("POSTGRES_PASSWORD=*"); got != "POSTGRES_PASSWORD=*" {
		t.Errorf("upper case of a secret: %q", got)
	}
	// A value past maxEncoded has no encodings (they would cost several
	// times its size); it is masked itself.
	big := strings.Repeat("k", maxEncoded+1)
	m = NewMasker(big)
	if got := m.Text("x " + base64.StdEncoding.EncodeToString([]byte(big))[:40]); strings.Contains(got, Mask) {
		t.Errorf("an encoding of a large value was masked")
	}
	if got := m.Text("x " + big); got != "x "+Mask {
		t.Errorf("a large value: not masked")
	}
}

// TestMaskerToolEncodings: the encodings scripts print with common tools —
// base64(1) wrapping at 76 columns and openssl at 64, a line at a time;
// jq's @uri and Python's quote (a space as %20, slashes kept), in either
// case of hex — are masked: every line, nothing of the secret left.
func TestMaskerToolEncodings(t *testing.T) {
	long := strings.Repeat("s3cr3t-K3y/w1th spaces&more:", 4) // 112 bytes: 152 in base64
	b64 := base64.StdEncoding.EncodeToString([]byte(long))
	uri := strings.ReplaceAll(url.QueryEscape(long), "+", "%20")
	tests := []struct {
		name  string
		lines []string
	}{
		{"base64 wrapped at 76", []string{b64[:76], b64[76:152]}},
		{"openssl base64 wrapped at 64", []string{b64[:64], b64[64:128], b64[128:]}},
		{"echo | base64, wrapped", func() []string {
			nl := base64.StdEncoding.EncodeToString([]byte(long + "\n"))
			return []string{nl[:76], nl[76:]}
		}()},
		{"jq @uri", []string{uri}},
		{"python quote", []string{strings.ReplaceAll(uri, "%2F", "/")}},
		{"lower-case hex", []string{regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(uri, strings.ToLower)}},
	}
	m := NewMasker(long)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, line := range tt.lines {
				if got := m.Text(line); got != Mask {
					t.Errorf("Text(%q) = %q, want %q", line, got, Mask)
				}
			}
		})
	}
}

// TestMaskerWrappedShortTail: the short last line of a wrapped encoding
// is masked as a line, not inside other words.
func TestMaskerWrappedShortTail(t *testing.T) {
	secret := strings.Repeat("k", 57) + ".+-" // 80 characters of base64: 76, then 4
	tail := base64.StdEncoding.EncodeToString([]byte(secret))[76:]
	m := NewMasker(secret)
	if got := m.Text(tail); got != Mask {
		t.Errorf("the last line alone: %q, want it masked", got)
	}
	if text := "Q" + tail + "ening and " + tail + "x"; m.Text(text) != text {
		t.Errorf("inside words: %q, want it unchanged", m.Text(text))
	}
}

// TestAddComputed: a value computed from a secret is masked when it is at
// least MinLength long; a shorter one (a yes, a length) is not masked
// anywhere, since as a word in every output it would garble it all.
func TestAddComputed(t *testing.T) {
	m := NewMasker()
	m.AddComputed("Tk/<Se", "yes", "18")
	if got := m.Text("prefix Tk/<Se, yes, 18 items"); got != "prefix *****, yes, 18 items" {
		t.Errorf("Text = %q", got)
	}
}

// TestMaskerEscapes: a secret with escape sequences between its characters
// (a word diff colours what changed) is masked as a terminal shows it,
// the line given without its escapes; a coloured line without a secret
// keeps its colours, and a secret outside the escapes is masked in place.
func TestMaskerEscapes(t *testing.T) {
	m := NewMasker("EscSecretVal9")
	for in, want := range map[string]string{
		"a=\x1b[1mEscSec\x1b[0mretVal9": "a=*****",
		"a=EscSec\x07retVal9":           "a=*****",
		"\x1b[32mok\x1b[0m":             "\x1b[32mok\x1b[0m",
		"\x1b[31mEscSecretVal9\x1b[0m":  "\x1b[31m*****\x1b[0m",
		"tab\tEscSecretVal9":            "tab\t*****",
	} {
		if got := m.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMaskerEscapesInsideOddSecrets: a secret with a tab or a byte that is
// no UTF-8, shown with an escape between its characters, is masked as the
// terminal shows it (the escape made Text sanitize the line, and the raw
// secret no longer matched).
func TestMaskerEscapesInsideOddSecrets(t *testing.T) {
	for secret, line := range map[string]string{
		"SecretPart\tTwo99":  "tok = Secret\x1b[1mPart\tTwo99",
		"secr\xc3et\xffzz12": "tok = se\x1b[0mcr\xc3et\xffzz12",
	} {
		m := NewMasker(secret)
		got := m.Text(line)
		if got != "tok = *****" {
			t.Errorf("Text(%q) = %q, want the secret masked", line, got)
		}
	}
}
