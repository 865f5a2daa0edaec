//go:build linux

package netns

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// IP runs ip(8) with args and returns its combined output; the error
// names the command and holds what it printed.
func IP(args ...string) (string, error) {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Remove kills the processes left in namespace ns (waking stopped ones
// first) and deletes it.
func Remove(ns string) {
	if out, err := IP("netns", "pids", ns); err == nil {
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGCONT)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	IP("netns", "del", ns)
}

// RemoveStale removes the namespaces that name matches, its first
// submatch the pid of the process that made them, when that process is
// gone. Those named with this process's pid are kept when ownLive (the
// process may be using them), and removed otherwise: a caller that makes
// its namespaces only once it has removed the stale ones knows that any
// named with its pid are the leftovers of an earlier process that had
// that pid.
func RemoveStale(name *regexp.Regexp, ownLive bool) {
	out, err := IP("netns", "list")
	if err != nil {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		m := name.FindStringSubmatch(f[0])
		if m == nil {
			continue
		}
		if pid, _ := strconv.Atoi(m[1]); pid == os.Getpid() {
			if ownLive {
				continue
			}
		} else if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue // another process's, still going
		}
		Remove(f[0])
	}
}
