package record_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/record"
)

// A program records the federation "demo" until interrupted, then plays
// the recording back into it.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := peer.Config{Federation: "demo", FederateType: "recorder"}
	rec := &record.Recorder{
		Classes: []string{"Aircraft"},
		Ready:   func(fed *peer.Federate) { fmt.Println("recording as", fed.Name()) },
	}
	st, err := rec.RecordFile(ctx, cfg, "demo.mrec")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("recorded %d events, %d bytes\n", st.Events, st.Bytes)

	cfg.FederateType = "player"
	res, err := (&record.Player{Speed: 10}).PlayFile(context.Background(), cfg, "demo.mrec")
	if err != nil {
		fmt.Println(err)
	}
	fmt.Printf("replayed %d events up to time %v\n", res.Events, res.Time)
}
