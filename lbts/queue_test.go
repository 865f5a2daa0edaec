package lbts

import (
	"container/heap"
	"math/rand/v2"
	"reflect"
	"testing"
)

// refQueue is tsoQueue's order kept by container/heap, for comparison.
type refQueue []TSO

func (q refQueue) Len() int           { return len(q) }
func (q refQueue) Less(i, j int) bool { return q[i].less(&q[j]) }
func (q refQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *refQueue) Push(x any)        { *q = append(*q, x.(TSO)) }
func (q *refQueue) Pop() any {
	old := *q
	m := old[len(old)-1]
	*q = old[:len(old)-1]
	return m
}

// TestTSOQueueAsHeap runs random pushes, pops and removals, with many
// equal keys, on tsoQueue and on container/heap: the arrays stay the
// same at every step, so the delivery order is container/heap's.
func TestTSOQueueAsHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q tsoQueue
	var ref refQueue
	for step := range 20000 {
		switch op := r.IntN(10); {
		case op < 5 || len(q) == 0:
			m := TSO{Time: float64(r.IntN(8)), From: FederateID(r.IntN(3)), Seq: uint64(r.IntN(4)), Group: uint32(r.IntN(2)), Payload: step}
			q.push(m)
			heap.Push(&ref, m)
		case op < 8:
			got, want := q.pop(), heap.Pop(&ref).(TSO)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: pop %+v, want %+v", step, got, want)
			}
		default:
			i := r.IntN(len(q))
			got, want := q.remove(i), heap.Remove(&ref, i).(TSO)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: remove(%d) %+v, want %+v", step, i, got, want)
			}
		}
		if !reflect.DeepEqual([]TSO(q), []TSO(ref)) && (len(q) > 0 || len(ref) > 0) {
			t.Fatalf("step %d: queue %+v, container/heap %+v", step, q, ref)
		}
	}
}
