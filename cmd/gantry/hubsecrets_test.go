package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
)

// hubSecrets is a Hub component's side of HUB_RANDOM, for the scenarios:
// it encrypts the "key = value" lines on its stdin with the one-time pad
// and prints them as the secrets raw output.
func hubSecrets() int {
	pad, err := base64.RawStdEncoding.DecodeString(os.Getenv("HUB_RANDOM"))
	if err != nil || len(pad) == 0 {
		fmt.Fprintln(os.Stderr, "hubsecrets: no HUB_RANDOM")
		return 1
	}
	plain, err := io.ReadAll(os.Stdin)
	if err != nil || len(plain) > len(pad) {
		fmt.Fprintln(os.Stderr, "hubsecrets: the secrets are longer than the pad")
		return 1
	}
	out := make([]byte, len(pad))
	copy(out, plain)
	for i := range out {
		out[i] ^= pad[i]
	}
	fmt.Printf("secrets = %s\n", base64.RawStdEncoding.EncodeToString(out))
	return 0
}
