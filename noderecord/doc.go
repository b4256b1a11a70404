// Package noderecord is the record this tool keeps on a node: its state (a label and an
// annotation), since when, why it was given up or failed, whose cordon the node carries
// (read from managedFields), and the run that holds it (an ID with the user, the command
// or the Maintenance, and a heartbeat renewed while the run lives).
//
// It makes no decision about draining: it reads a node's record (Read), builds the
// patches that write one (StatePatch), and sends them conditionally (Update: the node's
// resourceVersion as a precondition, read again on a conflict), so that a run never
// rewrites a record another live run holds (Record.HeldBy). The drain engine, pool moves,
// the operations layer, status and the dashboard all read and write nodes through it.
package noderecord
