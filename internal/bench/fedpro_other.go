//go:build !linux

package bench

import (
	"time"
)

// procCPU is unknown (-1) without /proc.
func procCPU(pid int) time.Duration { return -1 }

// procContextSwitches is unknown (-1) without /proc.
func procContextSwitches(pid int) int64 { return -1 }
