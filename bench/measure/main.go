// Command measure runs a command and prints its wall time and peak memory as
// one JSON line: {"wall_ms": 812.4, "max_rss_kb": 40312, "exit": 0}. The
// peak is the largest resident set of the command or any process it waited
// for (wait4's rusage).
//
//	go run ./bench/measure -- make -j8 all
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: measure -- command [args...]")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"wall_ms":    float64(wall.Microseconds()) / 1000,
		"max_rss_kb": rss,
		"exit":       code,
	})
}
