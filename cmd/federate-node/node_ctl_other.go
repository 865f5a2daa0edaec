//go:build !unix

package main

// tickCommands: no signals here, no commands.
func tickCommands() (c <-chan tickCommand, stop func()) { return nil, func() {} }
