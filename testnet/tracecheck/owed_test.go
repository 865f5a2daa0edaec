package tracecheck

import (
	"strings"
	"testing"
)

// owedHead: A regulates and sends on Aircraft (Position, TSO) and Chat
// (RO); B subscribes to both and is constrained.
const owedHead = `{"ev":"join","fed":"A","handle":"1"}
{"ev":"join","fed":"B","handle":"2"}
{"ev":"regulation","fed":"A","lookahead":1,"t":0}
{"ev":"subscribe","fed":"B","class":"HLAobjectRoot.Aircraft","attrs":["Position","Status"],"sub":true}
{"ev":"subscribe","fed":"B","class":"HLAinteractionRoot.Chat","sub":true}
{"ev":"constrained","fed":"B","t":0}
`

func report(t *testing.T, trace string) Report {
	t.Helper()
	rep, err := CheckReport(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A stream delivered whole breaks no owed rule, and the rules did look
// at it.
func TestOwedClean(t *testing.T) {
	rep := report(t, owedHead+`{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":1,"class":"HLAobjectRoot.Aircraft","obj":"1.1","attrs":["Position"],"epoch":0}
{"ev":"send","fed":"A","msg":"A/2","kind":"interaction","order":"RO","ts":null,"class":"HLAinteractionRoot.Chat"}
{"ev":"send","fed":"A","msg":"A/3","kind":"update","order":"TSO","ts":2,"class":"HLAobjectRoot.Aircraft","obj":"1.1","attrs":["Position"],"epoch":0}
{"ev":"send","fed":"A","msg":"A/4","kind":"interaction","order":"RO","ts":null,"class":"HLAinteractionRoot.Chat"}
{"ev":"send","fed":"A","msg":"A/5","kind":"interaction","order":"RO","ts":null,"class":"HLAinteractionRoot.Chat"}
{"ev":"send","fed":"A","msg":"A/6","kind":"update","order":"TSO","ts":3,"class":"HLAobjectRoot.Aircraft","obj":"1.1","attrs":["Position"],"epoch":0}
{"ev":"deliver","fed":"B","msg":"A/2","src":"1","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/1","src":"1","order":"TSO","ts":1,"obj":"1.1","attrs":["Position"],"epoch":0}
{"ev":"deliver","fed":"B","msg":"A/4","src":"1","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/5","src":"1","order":"RO","ts":null}
{"ev":"request","fed":"B","kind":"TAR","t":2}
{"ev":"deliver","fed":"B","msg":"A/3","src":"1","order":"TSO","ts":2,"obj":"1.1","attrs":["Position"],"epoch":0}
{"ev":"grant","fed":"B","t":2}
`)
	if len(rep.Violations) != 0 {
		t.Errorf("violations: %v", rep.Violations)
	}
	// Owed: A/3 (passed by the grant to 2; A/6 at 3 is not yet), A/4
	// and A/5 (after A/2, the Chat stream's first). A/1 and A/2 start
	// their streams.
	if rep.Owed != 3 {
		t.Errorf("owed %d, want 3", rep.Owed)
	}
}

// Each planted loss is caught by its rule, and each excuse the rules
// allow keeps it from being reported.
func TestOwedViolations(t *testing.T) {
	const (
		tso1 = `{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":1,"class":"HLAobjectRoot.Aircraft","obj":"1.1","attrs":["Position"],"epoch":0}
`
		got1 = `{"ev":"deliver","fed":"B","msg":"A/1","src":"1","order":"TSO","ts":1,"obj":"1.1","attrs":["Position"],"epoch":0}
`
		tso2 = `{"ev":"send","fed":"A","msg":"A/2","kind":"update","order":"TSO","ts":2,"class":"HLAobjectRoot.Aircraft","obj":"1.1","attrs":["Position"],"epoch":0}
`
		grant2 = `{"ev":"request","fed":"B","kind":"TAR","t":2}
{"ev":"grant","fed":"B","t":2}
`
		chats = `{"ev":"send","fed":"A","msg":"A/1","kind":"interaction","order":"RO","ts":null,"class":"HLAinteractionRoot.Chat"}
{"ev":"send","fed":"A","msg":"A/2","kind":"interaction","order":"RO","ts":null,"class":"HLAinteractionRoot.Chat"}
{"ev":"send","fed":"A","msg":"A/3","kind":"interaction","order":"RO","ts":null,"class":"HLAinteractionRoot.Chat"}
{"ev":"deliver","fed":"B","msg":"A/1","src":"1","order":"RO","ts":null}
`
	)
	// A subscription written again before the stream begins replaces
	// the head's.
	const (
		regions = `{"ev":"subscribe","fed":"B","class":"HLAobjectRoot.Aircraft","attrs":["Position","Status"],"sub":true,"regions":true}
`
		rate = `{"ev":"subscribe","fed":"B","class":"HLAobjectRoot.Aircraft","attrs":["Position","Status"],"sub":true,"rate":true}
`
	)
	const passed, hole = "no grant passes a message owed", "every reliable message of a stream is delivered"
	const reorder = "receive-order messages of a stream are delivered in the order sent"
	for _, tc := range []struct {
		name, trace, rule string // rule "": nothing owed is reported
	}{
		{"grant passes a lost TSO message", tso1 + got1 + tso2 + grant2, passed},
		{"a TARA grant passes a message below it", tso1 + got1 + tso2 + `{"ev":"request","fed":"B","kind":"TARA","t":3}
{"ev":"grant","fed":"B","t":3}
`, passed},
		{"a TARA grant does not pass a message at it", tso1 + got1 + tso2 + `{"ev":"request","fed":"B","kind":"TARA","t":2}
{"ev":"grant","fed":"B","t":2}
`, ""},
		{"a hole in a receive-order stream", chats + `{"ev":"deliver","fed":"B","msg":"A/3","src":"1","order":"RO","ts":null}
`, hole},
		{"a receive-order tail may still come", chats, ""},
		{"receive-order messages out of the order sent", strings.Replace(chats, `{"ev":"deliver","fed":"B","msg":"A/1","src":"1","order":"RO","ts":null}`,
			`{"ev":"deliver","fed":"B","msg":"A/2","src":"1","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/1","src":"1","order":"RO","ts":null}`, 1), reorder},
		{"the sender recorded lost first", tso1 + got1 + tso2 + `{"ev":"lost","fed":"B","peer":"A"}
` + grant2, ""},
		{"a gap reported first", tso1 + got1 + tso2 + `{"ev":"gap","fed":"B","peer":"A","src":"1","msgs":1}
` + grant2, ""},
		{"a gap of another sender", tso1 + got1 + tso2 + `{"ev":"gap","fed":"B","peer":"C","src":"3","msgs":1}
` + grant2, passed},
		{"a receive-order hole after a gap", chats + `{"ev":"gap","fed":"B","peer":"A","src":"1","msgs":1}
{"ev":"deliver","fed":"B","msg":"A/3","src":"1","order":"RO","ts":null}
`, ""},
		{"not constrained", tso1 + got1 + tso2 + `{"ev":"unconstrained","fed":"B"}
` + grant2, ""},
		{"best effort", tso1 + got1 + strings.Replace(tso2, `"epoch":0}`, `"epoch":0,"best":true}`, 1) + grant2, ""},
		{"retracted", tso1 + got1 + tso2 + `{"ev":"retract","fed":"A","msg":"A/2"}
` + grant2, ""},
		{"an attribute not subscribed", tso1 + got1 + strings.Replace(tso2, `"attrs":["Position"]`, `"attrs":["Fuel"]`, 1) + grant2, ""},
		{"an older epoch than one seen", tso1 + got1 + tso2 + `{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":"C","epoch":7}
` + grant2, ""},
		{"the subscription changed after the stream began", tso1 + got1 + `{"ev":"subscribe","fed":"B","class":"HLAobjectRoot.Aircraft","attrs":["Status"],"sub":true}
` + tso2 + grant2, ""},
		{"the subscription written again unchanged", tso1 + got1 + `{"ev":"subscribe","fed":"B","class":"HLAobjectRoot.Aircraft","attrs":["Position","Status"],"sub":true}
` + tso2 + grant2, passed},
		{"a subscription with regions", regions + tso1 + got1 + tso2 + grant2, ""},
		{"a subscription with an update rate", rate + tso1 + got1 + tso2 + grant2, ""},
		{"the instance removed first (its federate left)", tso1 + got1 + tso2 + `{"ev":"removed","fed":"B","obj":"1.1"}
` + grant2, ""},
		{"the instance removed after the grant", tso1 + got1 + tso2 + grant2 + `{"ev":"removed","fed":"B","obj":"1.1"}
`, passed},
		{"another instance removed first", tso1 + got1 + tso2 + `{"ev":"removed","fed":"B","obj":"1.2"}
` + grant2, passed},
		{"a delete delivered first", tso1 + got1 + tso2 + `{"ev":"send","fed":"A","msg":"A/3","kind":"delete","order":"RO","ts":null,"class":"HLAobjectRoot.Aircraft"}
{"ev":"deliver","fed":"B","msg":"A/3","src":"1","order":"RO","ts":null,"obj":"1.1","attrs":[],"epoch":0}
` + grant2, ""},
		{"an update delivered first", tso1 + got1 + tso2 + `{"ev":"send","fed":"A","msg":"A/3","kind":"update","order":"RO","ts":null,"class":"HLAobjectRoot.Aircraft","obj":"1.1","attrs":["Status"],"epoch":0}
{"ev":"deliver","fed":"B","msg":"A/3","src":"1","order":"RO","ts":null,"obj":"1.1","attrs":["Status"],"epoch":0}
` + grant2, passed},
		{"a subclass's updates under the class subscribed", strings.ReplaceAll(tso1+got1+tso2+grant2, "HLAobjectRoot.Aircraft", "HLAobjectRoot.Aircraft.Jet"), passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := report(t, owedHead+tc.trace)
			var rules []string
			for _, v := range rep.Violations {
				if v.Rule == passed || v.Rule == hole || v.Rule == reorder {
					rules = append(rules, v.Rule)
				}
			}
			switch {
			case tc.rule == "" && len(rules) > 0:
				t.Errorf("reported %v; want nothing owed: %v", rules, rep.Violations)
			case tc.rule != "" && (len(rules) != 1 || rules[0] != tc.rule):
				t.Errorf("reported %v; want [%s]: %v", rules, tc.rule, rep.Violations)
			}
		})
	}
}
