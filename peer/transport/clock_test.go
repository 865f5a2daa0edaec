package transport

import (
	"slices"
	"testing"
	"time"
)

// TestManualClock: calls run inside Advance only, earliest first and in
// scheduling order at one time, a stopped call never, and a call that a
// call schedules runs in the same Advance when it is due by then.
func TestManualClock(t *testing.T) {
	var c ManualClock
	var ran []string
	at := func(name string) func() {
		return func() { ran = append(ran, name+"@"+c.Now().String()) }
	}
	c.AfterFunc(3*time.Millisecond, at("c"))
	c.AfterFunc(time.Millisecond, at("a"))
	c.AfterFunc(time.Millisecond, func() {
		ran = append(ran, "b@"+c.Now().String())
		c.AfterFunc(500*time.Microsecond, at("nested"))
	})
	stopped := c.AfterFunc(time.Millisecond, at("stopped"))
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop: want true once, then false")
	}
	if len(ran) != 0 {
		t.Fatalf("ran %v before Advance", ran)
	}
	c.Advance(2 * time.Millisecond)
	if want := []string{"a@1ms", "b@1ms", "nested@1.5ms"}; !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	if c.Now() != 2*time.Millisecond {
		t.Fatalf("now %v after advancing 2ms", c.Now())
	}
	c.Advance(time.Second)
	if len(ran) != 4 || ran[3] != "c@3ms" {
		t.Fatalf("ran %v, want c at 3ms last", ran)
	}
}
