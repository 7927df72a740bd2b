package keeper

import "time"

// Env marks this program as a run's output keeper, and Arg names it in ps
// (component.HelperCommand).
const (
	Env = "GANTRY_OUTPUT_KEEPER"
	Arg = "output-keeper"
)

// SessionEnv gives the keeper gantry's session (gantrySession).
const SessionEnv = "GANTRY_OUTPUT_KEEPER_SESSION"

// FD is the keeper's end of the socket, in the keeper.
const FD = 3

// The keeper's messages, each one packet: 'o' <first id> <log path> NUL
// <program> with the pipes' ends (ids first, first+1); 'd' <id>: gantry
// closed that pipe before its end (its writer failed, or a process left it
// open after it ended), the keeper must too, so that the writer gets EPIPE
// as it would without the keeper; 'b': gantry ends normally.
const (
	MsgOpen = 'o'
	MsgDrop = 'd'
	MsgBye  = 'b'
)

// OutputWait is how long gantry reads a process's output once the process
// ended, while descendants of it hold the output open; the keeper lets go
// of such an output after as long, once gantry is gone.
const OutputWait = 5 * time.Second
