package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// procCPU is the CPU process pid has used, user and system (utime +
// stime of /proc/PID/stat, in clock ticks of 10 ms); -1 if unreadable.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing one. utime and stime are fields 14 and 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	const tick = 10 * time.Millisecond // USER_HZ, 100 on Linux
	return time.Duration(ut+st) * tick
}

// procContextSwitches is the sum of the voluntary and involuntary
// context switches of process pid's threads; -1 if unreadable.
func procContextSwitches(pid int) int64 {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	if err != nil || len(tasks) == 0 {
		return -1
	}
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += x
			} else if v, ok := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); ok {
				x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += x
			}
		}
	}
	return n
}
