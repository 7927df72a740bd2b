package keeper

import (
	"syscall"
	"unsafe"
)

// The keeper makes the few system calls the syscall package has no
// function for itself, rather than import golang.org/x/sys/unix: that
// package sorts after most of gantry's dependencies, and the keeper's
// initialiser would wait for them all (package doc).

// sysPidfdOpen is pidfd_open(2)'s number (Linux 5.3) on every architecture
// but MIPS (4434, 5434, 6434 by ABI): there it fails with ENOSYS, and the
// keeper looks at a leader every keeperLook instead of watching its pidfd.
const sysPidfdOpen = 434

// pidfdOpen opens a descriptor that becomes readable when the process
// ends (closed on exec, as pidfd_open makes every one).
func pidfdOpen(pid int) (int, error) {
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// readable reports whether fd can be read without waiting (ppoll(2) with
// no timeout).
func readable(fd int) bool {
	type pollFd struct {
		fd             int32
		events, revent int16
	}
	const pollIn = 0x1
	p := pollFd{fd: int32(fd), events: pollIn}
	var zero syscall.Timespec
	n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	return errno == 0 && n > 0
}

// closeOnExec reports whether fd is closed on exec.
func closeOnExec(fd int) (bool, error) {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if errno != 0 {
		return false, errno
	}
	return flags&syscall.FD_CLOEXEC != 0, nil
}

// queued is how many bytes wait in a pipe (TIOCINQ, which is FIONREAD).
func queued(fd int) (int, error) {
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
