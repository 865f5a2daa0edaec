//go:build unix

package tick

import (
	"os"
	"os/signal"
	"syscall"
)

// Commands turns the signals the fault lab sends a tick federate
// into commands: SIGUSR1 asks the federation to save (cmdSave), SIGUSR2
// to restore the last save (cmdRestore). stop stops listening.
func Commands() (c <-chan Command, stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	cmds := make(chan Command, 4)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case s := <-sigs:
				cmd := cmdSave
				if s == syscall.SIGUSR2 {
					cmd = cmdRestore
				}
				select {
				case cmds <- cmd:
				default: // the federate has enough to do
				}
			case <-done:
				return
			}
		}
	}()
	return cmds, func() {
		signal.Stop(sigs)
		close(done)
		<-finished
	}
}
