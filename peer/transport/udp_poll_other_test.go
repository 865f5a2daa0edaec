//go:build !linux

package transport

import (
	"testing"
	"time"
)

// checkPoll does nothing: only Linux polls.
func checkPoll(*testing.T, *UDP, time.Duration) {}
