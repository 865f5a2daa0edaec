package bench

import (
	"os"
	"runtime"
	"strconv"
)

// shareCores gives each of procs bench processes running at once its
// share of this machine's cores: GOMAXPROCS = max(1, NumCPU/procs) for
// this process and, through the environment, for every child it starts
// (its federates and its raw floor alike, so the ratios compare like
// with like). With more Go processes than cores, the runtime's idle
// threads spinning for work in every process cost more than they save
// (docs/results.md, History of the figures: the benchmarks' cores). A
// GOMAXPROCS the user set wins; shareCores returns the value in force.
func shareCores(procs int) int {
	if v, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && v > 0 {
		return runtime.GOMAXPROCS(0)
	}
	n := max(1, runtime.NumCPU()/max(1, procs))
	runtime.GOMAXPROCS(n)
	os.Setenv("GOMAXPROCS", strconv.Itoa(n))
	return n
}
