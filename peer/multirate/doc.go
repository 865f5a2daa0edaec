// Package multirate runs a federate's work at several rates with
// coherent data: a main loop at the federation's data cycle, and jobs
// at whole multiples of it, each on a goroutine of its own and each
// seeing, for a whole cycle, one snapshot of the object instances it
// uses. It is built on the cycle loop (peer.Federate.RunCycles) and the
// public peer API only. docs/multirate.md explains the model and why it
// is coherent.
//
// # Model
//
// The main cycle is a step of logical time, T_main (Config.MainCycle).
// Main cycle m begins when the federate is granted E + m x T_main, E
// being its time when Scheduler.Run began. A job of cycle T_job = N x
// T_main has its boundaries at main cycles 0, N, 2N, ...: at boundary
// B (once the grant to B has come, so every time-stamp-order update
// stamped at or before B has been reflected) the scheduler copies the
// values of the job's instances into the job's Cycle and runs the job's
// function on the job's goroutine. The job reads only that copy
// (Cycle.Value), however long it runs and however far the main loop
// moves meanwhile. Its updates (Cycle.Update) are buffered and sent when
// the main loop reaches the next boundary B + T_job: time-stamped B +
// T_job when the federate is time-regulating, before it asks to advance
// there. The main loop waits for a job only there, at the end of the
// job's cycle (Stats counts each wait as Held).
//
//	sched, err := multirate.New(fed, multirate.Config{
//		MainCycle: peer.Float64Time(1),
//		Jobs: []multirate.Job{
//			{Name: "fast", Uses: multirate.Objects("OBJ1"), Run: fast},
//			{Name: "slow", Cycle: peer.Float64Time(5), Uses: multirate.Objects("OBJ4"), Run: slow},
//		},
//	})
//	if err != nil {
//		return err // names the job, the instance and the rule
//	}
//	err = sched.Run(ctx, 100) // 100 main cycles
//
// # Rules
//
// New and Config.Validate check rules 1 to 7 and return every violation,
// each a *RuleError naming the job, the instances and the rule:
//
//  1. A job's cycle is never shorter than the main cycle.
//  2. A job's cycle is a whole multiple of the main cycle.
//  3. A job whose cycle differs from the main cycle names the object
//     instances it uses (Job.Uses).
//  4. Cycle times apply per object instance, not per attribute: jobs of
//     different cycles that narrow one instance to different attributes
//     break it.
//  5. When every job runs at the main cycle, naming instances is
//     optional: a job at the main cycle that names none sees every
//     instance that no job of another cycle names.
//  6. An instance may be used by several jobs, which must then share one
//     cycle time.
//  7. A job has exactly one cycle time: a name given twice with two
//     cycles breaks it.
//  8. Within a job's cycle no new data appears to it; the next values
//     appear at its next boundary. The scheduler guarantees this.
//  9. Data a job uses without naming it is reported the first time the
//     job touches it: an error (Fail, the default), or a counted warning
//     (Warn), never silently incoherent.
//
// # Concurrency properties
//
// Run runs the main loop on its caller's goroutine and one goroutine per
// job; it returns only after every job goroutine has ended. A job's
// Cycle belongs to the job's goroutine while its function runs: the
// snapshot is a copy, so nothing the main loop does reaches it. A job's
// cycle k+1 starts only after cycle k returned and its updates were
// queued. Config.Handle runs on Run's goroutine, never beside the main
// loop's own work. Stats may be called from any goroutine.
package multirate
