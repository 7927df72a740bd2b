package params

import (
	"os"
	"syscall"
)

// maxEnvEntry is MAX_ARG_STRLEN (32 pages) less the terminating NUL.
func maxEnvEntry() int { return 32*os.Getpagesize() - 1 }

// maxEnvTotal is Linux's bound on a new process's arguments and environment
// together (fs/exec.c): a quarter of the stack's soft limit, at most three
// quarters of _STK_LIM (8 MiB), at least ARG_MAX (131,072 bytes).
func maxEnvTotal() int {
	limit := uint64(8<<20) / 4 * 3
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err == nil && rl.Cur/4 < limit {
		limit = rl.Cur / 4
	}
	return int(max(limit, 131072))
}
