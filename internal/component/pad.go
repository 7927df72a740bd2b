package component

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// The Hub CLI gives every component's process a one-time pad, HUB_RANDOM
// (base64 without padding), and a component may print its secret outputs
// as one raw output, secrets = base64(pad XOR "key = value" lines): the
// values never appear in its output in clear.
const (
	// PadEnv is the variable that holds the pad.
	PadEnv = "HUB_RANDOM"
	// SecretsKey is the raw output that holds the encrypted outputs.
	SecretsKey = "secrets"
	// DefaultPadBytes is the pad's size unless lifecycle.options.random.bytes
	// says otherwise.
	DefaultPadBytes = 128
	// MaxPadBytes bounds the pad: its base64 must fit in one environment
	// variable (Linux takes 128 KiB per string).
	MaxPadBytes = manifest.MaxPadBytes
)

// NewPad returns a pad of n random bytes and its text for the environment.
func NewPad(n int) ([]byte, string, error) {
	if n <= 0 {
		n = DefaultPadBytes
	}
	if n > MaxPadBytes {
		return nil, "", fmt.Errorf("a one-time pad of %d bytes is more than %d", n, MaxPadBytes)
	}
	pad := make([]byte, n)
	if _, err := rand.Read(pad); err != nil {
		return nil, "", fmt.Errorf("make the one-time pad: %w", err)
	}
	return pad, base64.RawStdEncoding.EncodeToString(pad), nil
}

// DecodeSecrets decrypts the secrets raw output with the pad the process
// had, and parses the "key = value" lines it holds (what follows a NUL is
// padding): outputs, and capabilities of "provides = a,b" lines. The text
// must be exactly as long as the pad, as the Hub requires.
func DecodeSecrets(text string, pad []byte) (map[string]string, []string, error) {
	text = strings.TrimRight(strings.TrimSpace(text), "=")
	// Measured before it is decoded: the output may be as large as a
	// capture keeps.
	if n := base64.RawStdEncoding.DecodedLen(len(text)); n != len(pad) {
		return nil, nil, fmt.Errorf("the secrets output is %d bytes, the one-time pad (HUB_RANDOM) %d: encrypt with all of it", n, len(pad))
	}
	data, err := base64.RawStdEncoding.DecodeString(text)
	if err != nil {
		return nil, nil, fmt.Errorf("the secrets output is not base64: %w", err)
	}
	if len(data) != len(pad) {
		return nil, nil, fmt.Errorf("the secrets output is %d bytes, the one-time pad (HUB_RANDOM) %d: encrypt with all of it", len(data), len(pad))
	}
	for i := range data {
		data[i] ^= pad[i]
	}
	if i := strings.IndexByte(string(data), 0); i >= 0 {
		data = data[:i]
	}
	c := NewCapture()
	c.Line("Outputs:")
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) != "" {
			c.Line(l)
		}
	}
	if err := c.Err(); err != nil {
		return nil, nil, err
	}
	return c.Outputs(), c.Provides(), nil
}
