package fedpro

import (
	"bytes"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// ackClient is a session of NewAcknowledgedSession: its push numbers
// the callbacks as the session layer does, and the test answers them
// (CallbackResponse) when it chooses.
type ackClient struct {
	*fpClient
	next uint32
	seqs []uint32 // of c.cbs, in order
}

func (n *fpNet) ackClient(t *testing.T, name string) *ackClient {
	h := n.host(name)
	c := &ackClient{fpClient: &fpClient{t: t, host: h}, next: 1}
	c.s = h.NewAcknowledgedSession(func(b []byte) (uint32, error) {
		var cb pb.CallbackRequest
		if err := proto.Unmarshal(b, &cb); err != nil {
			t.Errorf("a callback that does not decode: %v", err)
		}
		c.fpClient.mu.Lock()
		defer c.fpClient.mu.Unlock()
		c.next++
		c.cbs = append(c.cbs, &cb)
		c.seqs = append(c.seqs, c.next)
		return c.next, nil
	})
	t.Cleanup(func() { c.s.Close(nil); h.Close() })
	return c
}

// waitSeq waits for the first callback match accepts and returns its
// sequence number.
func (c *ackClient) waitSeq(what string, match func(*pb.CallbackRequest) bool) uint32 {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.fpClient.mu.Lock()
		for i, cb := range c.cbs {
			if match(cb) {
				seq := c.seqs[i]
				c.cbs = append(c.cbs[:i:i], c.cbs[i+1:]...)
				c.seqs = append(c.seqs[:i:i], c.seqs[i+1:]...)
				c.fpClient.mu.Unlock()
				return seq
			}
		}
		c.fpClient.mu.Unlock()
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s callback in 10 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func tarReq(t float64) *pb.CallRequest {
	return &pb.CallRequest{CallRequest: &pb.CallRequest_TimeAdvanceRequestRequest{TimeAdvanceRequestRequest: &pb.TimeAdvanceRequestRequest{Time: &pb.LogicalTime{Data: f64(t)}}}}
}

func isGrant(cb *pb.CallbackRequest) bool { return cb.GetTimeAdvanceGrant() != nil }

// Through the Federate Protocol a pending state ends when the client
// answers the callback that ends it: before the client acknowledges the
// grant, a time advance answers InTimeAdvancingState and the logical
// time is the one before; after, the next request is accepted. Both
// forms of acknowledgement the public clients send count: Pitch's
// CallbackResponse (callbackSucceeded, or callbackFailed: the federate
// had the callback) and MAK's bare one (no payload); an answer to an
// earlier callback does not.
func TestConformancePendingUntilHandedOverFedPro(t *testing.T) {
	n := newFPNet(t)
	c := n.ackClient(t, "A")
	c.joinAs("A", true)
	succeeded, _ := proto.Marshal(&pb.CallbackResponse{CallbackResponse: &pb.CallbackResponse_CallbackSucceeded{CallbackSucceeded: &pb.CallbackSucceeded{}}})
	failed, _ := proto.Marshal(&pb.CallbackResponse{CallbackResponse: &pb.CallbackResponse_CallbackFailed{CallbackFailed: &pb.ExceptionData{ExceptionName: "FederateInternalError"}}})
	queryTime := &pb.CallRequest{CallRequest: &pb.CallRequest_QueryLogicalTimeRequest{QueryLogicalTimeRequest: &pb.QueryLogicalTimeRequest{}}}
	for i, form := range []struct {
		name    string
		payload []byte
	}{{"CallbackResponse succeeded", succeeded}, {"CallbackResponse failed", failed}, {"bare acknowledgement", nil}} {
		t.Run(form.name, func(t *testing.T) {
			c.t = t
			now, to := float64(2*i), float64(2*i+1)
			c.ok(tarReq(to))
			seq := c.waitSeq("grant", isGrant)
			c.fails(tarReq(to+1), "InTimeAdvancingState")
			if lt := c.ok(queryTime).GetQueryLogicalTimeResponse().GetResult().GetData(); !bytes.Equal(lt, f64(now)) {
				t.Errorf("logical time before the acknowledgement %x, want %v", lt, now)
			}
			c.s.CallbackResponse(seq-1, succeeded) // an earlier callback's answer
			c.fails(tarReq(to+1), "InTimeAdvancingState")
			c.s.CallbackResponse(seq, form.payload)
			if lt := c.ok(queryTime).GetQueryLogicalTimeResponse().GetResult().GetData(); !bytes.Equal(lt, f64(to)) {
				t.Errorf("logical time after the acknowledgement %x, want %v", lt, to)
			}
			c.ok(tarReq(to + 1))
			c.s.CallbackResponse(c.waitSeq("grant", isGrant), form.payload)
		})
	}
	t.Run("TimeRegulationEnabled", func(t *testing.T) {
		c.t = t
		enable := &pb.CallRequest{CallRequest: &pb.CallRequest_EnableTimeRegulationRequest{EnableTimeRegulationRequest: &pb.EnableTimeRegulationRequest{Lookahead: &pb.LogicalTimeInterval{Data: f64(1)}}}}
		c.ok(enable)
		seq := c.waitSeq("regulation", func(cb *pb.CallbackRequest) bool { return cb.GetTimeRegulationEnabled() != nil })
		c.fails(enable, "RequestForTimeRegulationPending")
		c.fails(tarReq(10), "RequestForTimeRegulationPending")
		c.s.CallbackResponse(seq, succeeded)
		c.fails(enable, "TimeRegulationAlreadyEnabled")
		c.ok(tarReq(10))
	})
}
