package lbts

import "container/heap"

// tsoQueue holds a constrained federate's TSO messages until a grant
// releases them, smallest (Time, From, Seq, Group) first.
type tsoQueue []TSO

func (q tsoQueue) Len() int           { return len(q) }
func (q tsoQueue) Less(i, j int) bool { return q[i].less(&q[j]) }
func (q tsoQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *tsoQueue) Push(x any)        { *q = append(*q, x.(TSO)) }
func (q *tsoQueue) Pop() any {
	old := *q
	m := old[len(old)-1]
	old[len(old)-1] = TSO{} // drop the payload reference
	*q = old[:len(old)-1]
	return m
}

func (q *tsoQueue) push(m TSO) { heap.Push(q, m) }

// popUpTo removes and passes to f, in order, every message with Time < t,
// or Time <= t when inclusive is set.
func (q *tsoQueue) popUpTo(t float64, inclusive bool, f func(TSO)) {
	for q.Len() > 0 {
		h := (*q)[0].Time
		if h > t || (h == t && !inclusive) {
			return
		}
		f(heap.Pop(q).(TSO))
	}
}

// min returns the smallest queued time stamp.
func (q tsoQueue) min() (float64, bool) {
	if len(q) == 0 {
		return 0, false
	}
	return q[0].Time, true
}
