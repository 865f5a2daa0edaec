package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// demoHandles are the handles of the demo FOM that the built-in federates
// use.
type demoHandles struct {
	aircraft          peer.ObjectClassHandle
	blob              peer.AttributeHandle
	ping, pong        peer.InteractionClassHandle
	pingSeq, pingData peer.ParameterHandle
	pongSeq, pongData peer.ParameterHandle
}

func lookupDemo(f *peer.Federate) (demoHandles, error) {
	var h demoHandles
	var errs []error
	get := func(err error) { errs = append(errs, err) }
	var err error
	h.aircraft, err = f.GetObjectClassHandle("Aircraft")
	get(err)
	h.blob, err = f.GetAttributeHandle(h.aircraft, "Blob")
	get(err)
	h.ping, err = f.GetInteractionClassHandle("Ping")
	get(err)
	h.pong, err = f.GetInteractionClassHandle("Pong")
	get(err)
	h.pingSeq, err = f.GetParameterHandle(h.ping, "Seq")
	get(err)
	h.pingData, err = f.GetParameterHandle(h.ping, "Payload")
	get(err)
	h.pongSeq, err = f.GetParameterHandle(h.pong, "Seq")
	get(err)
	h.pongData, err = f.GetParameterHandle(h.pong, "Payload")
	get(err)
	return h, errors.Join(errs...)
}

// Sequence numbers of control pings.
const (
	seqReport = -2 // "how many updates did you reflect?"; the Pong's payload answers
	seqStop   = -1 // "stop now"
)

// i64 encodes v as the demo FOM's Seq parameters are typed:
// HLAinteger64BE.
func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// opaque encodes b as the demo FOM's Payload parameters and Blob
// attribute are typed: HLAopaqueData, a 4-byte big-endian count and the
// bytes (so that a recording of the built-in federates decodes).
func opaque(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b))), b...)
}

// opaqueBytes returns the bytes of an HLAopaqueData value; false when it
// is not one.
func opaqueBytes(b []byte) ([]byte, bool) {
	if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != len(b)-4 {
		return nil, false
	}
	return b[4:], true
}

func readI64(b []byte) (int64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b)), true
}

// PongResult is what the pong federate reports (its "result" line).
type PongResult struct {
	Pings    int `json:"pings"`
	Reflects int `json:"reflects"`
}

// declarePingPong looks up the demo FOM's handles and declares fed's
// side of the ping-pong: the pinger (ping) publishes Ping and
// Aircraft.Blob and subscribes to Pong; the ponger the other way round.
func declarePingPong(fed *peer.Federate, ping bool) (demoHandles, error) {
	h, err := lookupDemo(fed)
	if err != nil {
		return h, err
	}
	send, receive, objects := h.ping, h.pong, fed.PublishObjectClassAttributes
	if !ping {
		send, receive, objects = h.pong, h.ping, fed.SubscribeObjectClassAttributes
	}
	return h, errors.Join(fed.PublishInteractionClass(send), fed.SubscribeInteractionClass(receive), objects(h.aircraft, h.blob))
}

// RunPong is the pong federate of `federate-node node -role pong`, the
// bench's other process: it answers every Ping with a Pong of the same Seq and counts the
// Aircraft updates it reflects, until a stop ping or ctx ends.
func RunPong(ctx context.Context, fed *peer.Federate) (*PongResult, error) {
	h, err := declarePingPong(fed, false)
	if err != nil {
		return nil, err
	}
	res := &PongResult{}
	for {
		ev, err := fed.Next(ctx)
		if err != nil {
			return res, err
		}
		switch ev := ev.(type) {
		case peer.ReflectAttributeValues:
			res.Reflects++
		case peer.ReceiveInteraction:
			seq, ok := readI64(ev.Values[h.pingSeq])
			if !ok {
				continue
			}
			res.Pings++
			payload := ev.Values[h.pingData] // echoed as it came
			if seq == seqReport {
				payload = opaque(i64(int64(res.Reflects)))
			}
			if err := fed.SendInteraction(h.pong, peer.ParameterValues{h.pongSeq: i64(seq), h.pongData: payload}, nil); err != nil {
				return res, err
			}
			if seq == seqStop {
				return res, nil
			}
		}
	}
}

// PingResult is what the ping federate measures (its "result" line).
type PingResult struct {
	RTTMedianMicros float64 `json:"rttMedianMicros"`
	RTTP90Micros    float64 `json:"rttP90Micros"`
	Pings           int     `json:"pings"`
	Updates         int     `json:"updates"`
	PayloadBytes    int     `json:"payloadBytes"`
	Reflected       int64   `json:"reflected"`
	Seconds         float64 `json:"seconds"`
	UpdatesPerSec   float64 `json:"updatesPerSec"`
}

// pinger is the measuring side of a ping/pong pair: it sends Pings and
// Aircraft updates, and reads Pongs.
type pinger struct {
	fed *peer.Federate
	h   demoHandles
	obj peer.ObjectInstanceHandle
	// receivers is how many pong federates answer each ping (0 means
	// 1): a ping is done when that many distinct ones answered.
	receivers int
}

// newPinger publishes and subscribes what the ping side needs and waits
// for the first answered ping, which proves the pong side subscribed.
func newPinger(ctx context.Context, fed *peer.Federate) (*pinger, error) {
	return newPingerOf(ctx, fed, 1)
}

// newPingerOf is newPinger for receivers pong federates: it waits for
// every one's answer to the first ping.
func newPingerOf(ctx context.Context, fed *peer.Federate, receivers int) (*pinger, error) {
	h, err := declarePingPong(fed, true)
	if err != nil {
		return nil, err
	}
	p := &pinger{fed: fed, h: h, receivers: receivers}
	if _, err := p.ping(ctx, 0, nil, 200*time.Millisecond); err != nil {
		return nil, fmt.Errorf("no answer to the first ping: %w", err)
	}
	return p, nil
}

// ping sends one ping and waits for its pong, resending after retry (the
// other side may not have subscribed yet); it returns the pong's payload.
func (p *pinger) ping(ctx context.Context, seq int64, payload []byte, retry time.Duration) ([]byte, error) {
	all, err := p.pingAll(ctx, seq, payload, retry)
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// pingAll is ping for every pong federate: it returns once each of
// p.receivers distinct ones answered, with their payloads.
func (p *pinger) pingAll(ctx context.Context, seq int64, payload []byte, retry time.Duration) ([][]byte, error) {
	answers := map[peer.FederateHandle][]byte{}
	want := max(p.receivers, 1)
	params := peer.ParameterValues{p.h.pingSeq: i64(seq), p.h.pingData: opaque(payload)}
	for {
		if err := p.fed.SendInteraction(p.h.ping, params, nil); err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, retry)
		for {
			ev, err := p.fed.Next(wctx)
			if err != nil {
				cancel()
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				break // resend
			}
			if ri, ok := ev.(peer.ReceiveInteraction); ok {
				if got, ok := readI64(ri.Values[p.h.pongSeq]); ok && got == seq {
					answers[ri.Producer] = ri.Values[p.h.pongData]
					if len(answers) >= want {
						cancel()
						out := make([][]byte, 0, len(answers))
						for _, a := range answers {
							out = append(out, a)
						}
						return out, nil
					}
				}
			}
		}
	}
}

// roundTrips times n ping-pongs carrying size payload bytes each.
func (p *pinger) roundTrips(ctx context.Context, n, size int) ([]time.Duration, error) {
	rtts := make([]time.Duration, 0, n)
	payload := make([]byte, size)
	for i := int64(1); i <= int64(n); i++ {
		start := time.Now()
		if _, err := p.ping(ctx, i, payload, time.Second); err != nil {
			return rtts, fmt.Errorf("ping %d: %w", i, err)
		}
		rtts = append(rtts, time.Since(start))
	}
	return rtts, nil
}

// updates sends count updates of size bytes (or as many as fit in
// duration, when it is positive), then asks the pong side until it has
// reflected all of them. It returns how many were sent, how many
// reflected, and the time from the first update to the last reflection
// known.
func (p *pinger) updates(ctx context.Context, count, size int, duration time.Duration) (sent, reflected int64, elapsed time.Duration, err error) {
	if p.obj == (peer.ObjectInstanceHandle{}) {
		if p.obj, err = p.fed.RegisterObjectInstance(p.h.aircraft, ""); err != nil {
			return 0, 0, 0, err
		}
	}
	before, err := p.reflected(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	// An HLAopaqueData of size bytes, the first 4 of which count.
	payload := opaque(make([]byte, max(size, 4))[:size])
	start := time.Now()
	var end time.Time
	if duration > 0 {
		end = start.Add(duration)
	}
	for i := 0; i < count; i++ {
		if size >= 4 {
			binary.BigEndian.PutUint32(payload[4:], uint32(i))
		}
		if err := p.fed.UpdateAttributeValues(p.obj, peer.AttributeValues{p.h.blob: payload}, nil); err != nil {
			return sent, 0, 0, err
		}
		sent++
		if !end.IsZero() && i%64 == 0 && time.Now().After(end) {
			break
		}
	}
	// The report ping travels after the updates on its own group; ask
	// until the count is complete (repairs may still be under way).
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := p.reflected(ctx)
		if err != nil {
			return sent, reflected, time.Since(start), err
		}
		reflected = n - before
		if reflected >= sent || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed = time.Since(start)
	if reflected != sent {
		return sent, reflected, elapsed, fmt.Errorf("pong reflected %d of %d updates", reflected, sent)
	}
	return sent, reflected, elapsed, nil
}

// reflected asks the pong side how many updates it has reflected: the
// fewest any pong federate reflected.
func (p *pinger) reflected(ctx context.Context) (int64, error) {
	all, err := p.pingAll(ctx, seqReport, nil, time.Second)
	if err != nil {
		return 0, fmt.Errorf("asking for the update count: %w", err)
	}
	least := int64(-1)
	for _, b := range all {
		b, _ = opaqueBytes(b)
		if n, _ := readI64(b); least < 0 || n < least {
			least = n
		}
	}
	return least, nil
}

// stop asks the pong side to stop. It answers and exits at once, so its
// answer may not survive a loss (nobody is left to repair it): wait a
// little, then go on either way.
func (p *pinger) stop(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, _ = p.ping(sctx, seqStop, nil, time.Second)
}

// RunPing is the ping federate of `federate-node node -role ping`: it
// waits for a pong federate to answer, measures 200 ping-pong
// round trips, then sends count updates of size bytes and reports how
// many the pong federate reflected, and how fast.
func RunPing(ctx context.Context, fed *peer.Federate, count, size int) (*PingResult, error) {
	p, err := newPinger(ctx, fed)
	if err != nil {
		return nil, err
	}
	res := &PingResult{Updates: count, PayloadBytes: size}
	rtts, err := p.roundTrips(ctx, 200, 8)
	if err != nil {
		return res, err
	}
	slices.Sort(rtts)
	res.Pings = len(rtts)
	res.RTTMedianMicros = float64(rtts[len(rtts)/2].Microseconds())
	res.RTTP90Micros = float64(rtts[len(rtts)*9/10].Microseconds())
	_, reflected, elapsed, err := p.updates(ctx, count, size, 0)
	res.Reflected, res.Seconds = reflected, elapsed.Seconds()
	if res.Seconds > 0 {
		res.UpdatesPerSec = float64(res.Reflected) / res.Seconds
	}
	p.stop(ctx)
	return res, err
}
