// Package cli implements the distpass command: its subcommands, flags and
// exit codes, over explicit standard streams so that tests can run it in
// process. cmd/distpass only calls Main.
//
// Exit codes: 0 success, 1 bad input or a failed pass, 2 usage.
package cli
