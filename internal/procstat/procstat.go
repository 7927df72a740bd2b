// Package procstat reads what Linux's /proc tells about a process: its
// state, group, session and start (/proc/<pid>/stat), and which boot of the
// machine this is. It depends on the standard library only: the output
// keeper, which starts before the rest of gantry is initialised, reads it
// too.
package procstat

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stat is what /proc/<pid>/stat tells about a process.
type Stat struct {
	State   byte // R, S, D, Z, X…
	PPID    int
	Pgrp    int
	Session int
	Start   uint64 // clock ticks after boot
}

// Read reads a process's stat; false when the process is gone or the file
// cannot be made sense of.
func Read(pid int) (Stat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return Stat{}, false
	}
	fields := strings.Fields(string(data[i+1:])) // from field 3 on
	if len(fields) < 20 || len(fields[0]) != 1 {
		return Stat{}, false
	}
	ppid, _ := strconv.Atoi(fields[1])
	pgrp, _ := strconv.Atoi(fields[2])
	session, _ := strconv.Atoi(fields[3])
	start, _ := strconv.ParseUint(fields[19], 10, 64) // field 22
	return Stat{State: fields[0][0], PPID: ppid, Pgrp: pgrp, Session: session, Start: start}, true
}

// clockTicks is the kernel's USER_HZ: 100 on every Linux gantry runs on.
const clockTicks = 100

// SinceBoot is when the process started, as time since boot.
func (s Stat) SinceBoot() time.Duration {
	return time.Duration(s.Start) * (time.Second / clockTicks)
}

// Self is this process's stat (the zero Stat where /proc cannot be read).
func Self() Stat {
	st, _ := Read(os.Getpid())
	return st
}

// BootID names this boot of the machine ("" where the kernel does not say):
// a pid, and a start time since boot, name a process of one boot only.
var BootID = sync.OnceValue(func() string {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
})
