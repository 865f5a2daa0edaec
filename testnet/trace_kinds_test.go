package testnet

import (
	"strings"
	"testing"
)

// The checker knows what TARA, NMRA and FQR allow: messages at exactly
// the granted time after an Available grant, and deliveries ahead of
// time (and out of the common order) for a flush. TAR still may not.
func TestCheckTraceRequestKinds(t *testing.T) {
	head := `{"ev":"join","fed":"A","handle":"1"}
{"ev":"join","fed":"B","handle":"2"}
{"ev":"join","fed":"C","handle":"3"}
{"ev":"regulation","fed":"A","lookahead":0,"t":0}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":9,"class":"X"}
{"ev":"send","fed":"A","msg":"A/2","kind":"update","order":"TSO","ts":3,"class":"X"}
{"ev":"send","fed":"A","msg":"A/3","kind":"update","order":"TSO","ts":5,"class":"X"}
{"ev":"send","fed":"A","msg":"A/4","kind":"update","order":"TSO","ts":5,"class":"X"}
`
	// atItsTime: B asks kind to 5 and gets a message at 5 (A/4) before
	// the grant, another at 5 (A/3) after it; C gets both in send order.
	atItsTime := func(kind string) string {
		return `{"ev":"request","fed":"B","kind":"` + kind + `","t":5}
{"ev":"deliver","fed":"B","msg":"A/4","order":"TSO","ts":5}
{"ev":"grant","fed":"B","t":5}
{"ev":"request","fed":"B","kind":"TAR","t":6}
{"ev":"deliver","fed":"B","msg":"A/3","order":"TSO","ts":5}
{"ev":"grant","fed":"B","t":6}
{"ev":"request","fed":"C","kind":"TAR","t":6}
{"ev":"deliver","fed":"C","msg":"A/3","order":"TSO","ts":5}
{"ev":"deliver","fed":"C","msg":"A/4","order":"TSO","ts":5}
{"ev":"grant","fed":"C","t":6}
`
	}
	for _, tc := range []struct {
		name, trace string
		rules       []string
	}{
		{"FQR delivers ahead and out of order", `{"ev":"request","fed":"B","kind":"FQR","t":4}
{"ev":"deliver","fed":"B","msg":"A/2","order":"TSO","ts":3}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":9}
{"ev":"grant","fed":"B","t":3}
{"ev":"request","fed":"C","kind":"TAR","t":10}
{"ev":"deliver","fed":"C","msg":"A/2","order":"TSO","ts":3}
{"ev":"deliver","fed":"C","msg":"A/3","order":"TSO","ts":5}
{"ev":"deliver","fed":"C","msg":"A/1","order":"TSO","ts":9}
{"ev":"grant","fed":"C","t":10}
{"ev":"request","fed":"B","kind":"TAR","t":10}
{"ev":"deliver","fed":"B","msg":"A/3","order":"TSO","ts":5}
{"ev":"grant","fed":"B","t":10}
`, nil},
		{"TAR may not deliver ahead", `{"ev":"request","fed":"B","kind":"TAR","t":4}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":9}
{"ev":"grant","fed":"B","t":4}
`, []string{"TSO delivered before a grant is at most its time"}},
		{"TARA lets messages at its time follow", atItsTime("TARA"), nil},
		{"TAR does not", atItsTime("TAR"), []string{"no TSO delivery at or below the last grant", "TSO messages are delivered in the same order everywhere"}},
		{"retractions are known events", `{"ev":"retract","fed":"A","msg":"A/1"}
{"ev":"retracted","fed":"B","msg":"A/1","outcome":"dropped"}
`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := CheckTrace(strings.NewReader(head + tc.trace))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, v.Rule)
			}
			if strings.Join(got, "|") != strings.Join(tc.rules, "|") {
				t.Errorf("violations %v, want rules %q", vs, tc.rules)
			}
		})
	}
}
