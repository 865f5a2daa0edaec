package lbts

// tsoQueue holds a constrained federate's TSO messages until a grant
// releases them, smallest (Time, From, Seq, Group) first: a binary heap,
// kept by the same steps as container/heap's (so the array is laid out
// as it would be), without boxing each message into an interface on the
// way in and out.
type tsoQueue []TSO

func (q tsoQueue) Len() int { return len(q) }

// push adds m.
func (q *tsoQueue) push(m TSO) {
	*q = append(*q, m)
	q.up(len(*q) - 1)
}

// pop removes and returns the smallest message; q must not be empty.
func (q *tsoQueue) pop() TSO {
	n := len(*q) - 1
	(*q)[0], (*q)[n] = (*q)[n], (*q)[0]
	q.down(0, n)
	return q.dropLast()
}

// remove removes and returns the message at index i.
func (q *tsoQueue) remove(i int) TSO {
	n := len(*q) - 1
	if n != i {
		(*q)[i], (*q)[n] = (*q)[n], (*q)[i]
		if !q.down(i, n) {
			q.up(i)
		}
	}
	return q.dropLast()
}

// dropLast removes and returns the last element of the array.
func (q *tsoQueue) dropLast() TSO {
	old := *q
	m := old[len(old)-1]
	old[len(old)-1] = TSO{} // drop the payload reference
	*q = old[:len(old)-1]
	return m
}

// up moves the message at j towards the root while it is smaller than
// its parent.
func (q tsoQueue) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !q[j].less(&q[i]) {
			break
		}
		q[i], q[j] = q[j], q[i]
		j = i
	}
}

// down moves the message at i0 away from the root, within q[:n], while
// a child is smaller; it reports whether the message moved.
func (q tsoQueue) down(i0, n int) bool {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && q[j2].less(&q[j1]) {
			j = j2 // right child
		}
		if !q[j].less(&q[i]) {
			break
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
	return i > i0
}

// popUpTo removes and passes to f, in order, every message with Time < t,
// or Time <= t when inclusive is set.
func (q *tsoQueue) popUpTo(t float64, inclusive bool, f func(TSO)) {
	for q.Len() > 0 {
		h := (*q)[0].Time
		if h > t || (h == t && !inclusive) {
			return
		}
		f(q.pop())
	}
}

// min returns the smallest queued time stamp.
func (q tsoQueue) min() (float64, bool) {
	if len(q) == 0 {
		return 0, false
	}
	return q[0].Time, true
}
