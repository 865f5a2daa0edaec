package fedpro

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// fakeQueue is a CallbackQueue: what it queues reaches the client (the
// fpClient's callbacks) only when flushed.
type fakeQueue struct {
	c       *fpClient
	mu      sync.Mutex
	next    uint32
	queued  [][]byte
	flushes int
}

func (q *fakeQueue) QueueCallback(b []byte) (uint32, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.next++
	q.queued = append(q.queued, b)
	return q.next, nil
}

func (q *fakeQueue) Flush() {
	q.mu.Lock()
	queued := q.queued
	q.queued = nil
	if len(queued) > 0 {
		q.flushes++
	}
	q.mu.Unlock()
	for _, b := range queued {
		var cb pb.CallbackRequest
		if err := proto.Unmarshal(b, &cb); err != nil {
			q.c.t.Errorf("a callback that does not decode: %v", err)
			continue
		}
		q.c.mu.Lock()
		q.c.cbs = append(q.c.cbs, &cb)
		q.c.mu.Unlock()
	}
}

// queuedClient is a client of NewQueuedSession over a fakeQueue.
func (n *fpNet) queuedClient(t *testing.T, name string) (*fpClient, *fakeQueue) {
	h := n.host(name)
	c := &fpClient{t: t, host: h}
	q := &fakeQueue{c: c}
	c.s = h.NewQueuedSession(q)
	t.Cleanup(func() { c.s.Close(nil); h.Close() })
	return c, q
}

// A session of NewQueuedSession flushes the callbacks it queued before
// it waits for more: every interaction of a burst reaches the client,
// in order, the last one included, in fewer flushes than callbacks or
// as many.
func TestQueuedSessionFlushes(t *testing.T) {
	n := newFPNet(t)
	a, q := n.queuedClient(t, "A")
	b := n.client(t, "B")
	a.joinAs("A", true)
	b.joinAs("B", false)
	wave := a.interactionHandle("Wave")
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeInteractionClassRequest{SubscribeInteractionClassRequest: &pb.SubscribeInteractionClassRequest{InteractionClass: wave}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishInteractionClassRequest{PublishInteractionClassRequest: &pb.PublishInteractionClassRequest{InteractionClass: wave}}})
	send := func(tag string) {
		b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{
			InteractionClass: wave, ParameterValues: &pb.ParameterHandleValueMap{}, UserSuppliedTag: []byte(tag)}}})
	}
	// Probe until the subscription has reached B, then drop the probes.
	for probe := 0; ; probe++ {
		send("probe")
		time.Sleep(20 * time.Millisecond)
		a.mu.Lock()
		got := len(a.cbs) > 0
		a.mu.Unlock()
		if got {
			break
		}
		if probe == 500 {
			t.Fatal("no probe reached A")
		}
	}
	time.Sleep(50 * time.Millisecond)
	a.mu.Lock()
	a.cbs = nil
	a.mu.Unlock()
	const count = 300
	for i := range count {
		send(fmt.Sprint(i))
	}
	for i := range count {
		cb := a.wait(fmt.Sprint("interaction ", i), func(cb *pb.CallbackRequest) bool {
			return cb.GetReceiveInteraction() != nil && string(cb.GetReceiveInteraction().GetUserSuppliedTag()) != "probe"
		})
		if tag := string(cb.GetReceiveInteraction().GetUserSuppliedTag()); tag != fmt.Sprint(i) {
			t.Fatalf("interaction %d tagged %q", i, tag)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.flushes < 1 || q.flushes > int(q.next) || len(q.queued) != 0 {
		t.Errorf("%d flushes for %d callbacks, %d left queued", q.flushes, q.next, len(q.queued))
	}
}

// Quick accepts an update's and an interaction's call request, alone,
// and nothing else.
func TestQuick(t *testing.T) {
	s := &Session{}
	enc := func(req *pb.CallRequest) []byte {
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	update := enc(&pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesRequest{UpdateAttributeValuesRequest: &pb.UpdateAttributeValuesRequest{UserSuppliedTag: []byte("t")}}})
	for _, c := range []struct {
		name    string
		payload []byte
		want    bool
	}{
		{"update", update, true},
		{"empty update", enc(&pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesRequest{UpdateAttributeValuesRequest: &pb.UpdateAttributeValuesRequest{}}}), true},
		{"interaction", enc(&pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{}}}), true},
		{"timed update", enc(&pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesWithTimeRequest{UpdateAttributeValuesWithTimeRequest: &pb.UpdateAttributeValuesWithTimeRequest{}}}), true},
		{"directed interaction", enc(&pb.CallRequest{CallRequest: &pb.CallRequest_SendDirectedInteractionRequest{SendDirectedInteractionRequest: &pb.SendDirectedInteractionRequest{}}}), true},
		{"join", enc(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{}}}), false},
		{"time advance", enc(tarReq(1)), false},
		{"update then another field", protowire.AppendBytes(protowire.AppendTag(update, 1, protowire.BytesType), nil), false},
		{"update cut short", update[:len(update)-1], false},
		{"empty", nil, false},
		{"garbage", []byte{0xff, 0xff, 0xff}, false},
	} {
		if got := s.Quick(c.payload); got != c.want {
			t.Errorf("%s: Quick %v, want %v", c.name, got, c.want)
		}
	}
}

// The shared encodings of the empty responses are what proto.Marshal
// makes of them, and a call with one is answered with it.
func TestEmptyResponses(t *testing.T) {
	fields := responseOneof.Fields()
	checked := 0
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() == nil {
			continue
		}
		var resp pb.CallResponse
		inner := resp.ProtoReflect().NewField(fd)
		resp.ProtoReflect().Set(fd, inner)
		want, err := proto.Marshal(&resp)
		if err != nil {
			t.Fatal(err)
		}
		if got := emptyResponses[fd.Number()]; string(got) != string(want) {
			t.Errorf("%s: % x, want % x", fd.Name(), got, want)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("checked %d responses", checked)
	}
	a := newFPNet(t).soloJoined(t)
	wave := a.interactionHandle("Wave")
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishInteractionClassRequest{PublishInteractionClassRequest: &pb.PublishInteractionClassRequest{InteractionClass: wave}}})
	resp := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{InteractionClass: wave, ParameterValues: &pb.ParameterHandleValueMap{}}}})
	if resp.GetSendInteractionResponse() == nil {
		t.Errorf("send interaction answered %v", resp)
	}
}
