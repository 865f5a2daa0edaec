//go:build !unix

package tick

// Commands: no signals here, no commands.
func Commands() (c <-chan Command, stop func()) { return nil, func() {} }
