package fedpro

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/hla"
)

// HLAplainTextPassword's data is an HLAunicodeString: a big-endian
// count of UTF-16 units, then the units; a character beyond the BMP
// takes two.
func TestPlainTextPasswordEncoding(t *testing.T) {
	c := PlainTextPassword("ab")
	if c.GetType() != "HLAplainTextPassword" || !bytes.Equal(c.GetData(), []byte{0, 0, 0, 2, 0, 'a', 0, 'b'}) {
		t.Fatalf("PlainTextPassword(ab) = %q % x", c.GetType(), c.GetData())
	}
	for _, pw := range []string{"", "ab", "grüße", "pass\U0001F511word"} {
		got, err := DecodePlainTextPassword(PlainTextPassword(pw))
		if err != nil || got != pw {
			t.Errorf("round trip of %q: %q, %v", pw, got, err)
		}
	}
	if n := len(PlainTextPassword("\U0001F511").GetData()); n != 8 {
		t.Errorf("a surrogate pair encodes in %d bytes, want 8", n)
	}
	for _, bad := range [][]byte{nil, {0, 0}, {0, 0, 0, 2, 0, 'a'}, {0, 0, 0, 1, 0, 'a', 0}, {0xff, 0xff, 0xff, 0xff}} {
		if _, err := DecodePlainTextPassword(&pb.Credentials{Type: PlainTextPasswordType, Data: bad}); !errors.Is(err, hla.ErrInvalidCredentials) {
			t.Errorf("data % x: %v, want InvalidCredentials", bad, err)
		}
	}
	if _, err := DecodePlainTextPassword(&pb.Credentials{Type: "Kerberos", Data: []byte{1}}); !errors.Is(err, hla.ErrUnauthorized) {
		t.Errorf("another type: %v, want Unauthorized", err)
	}
}

func testPasswords(t *testing.T, lines ...string) *Passwords {
	t.Helper()
	p, err := ParsePasswords(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hashLine(t *testing.T, name, pw string) string {
	t.Helper()
	line, err := HashPassword(name, pw, bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

func TestPasswordsFile(t *testing.T) {
	alice, bob := hashLine(t, "alice", "s3cret"), hashLine(t, "bob", "hunter2")
	if !strings.HasPrefix(alice, "alice:$2") {
		t.Fatalf("HashPassword line %q", alice)
	}
	var matched []string
	p := testPasswords(t, "# site A", "", alice, "  "+bob+"  ")
	if p.Len() != 2 {
		t.Fatalf("%d entries, want 2", p.Len())
	}
	for _, tc := range []struct {
		creds *pb.Credentials
		want  error
	}{
		{PlainTextPassword("s3cret"), nil},
		{PlainTextPassword("hunter2"), nil},
		{PlainTextPassword("S3cret"), hla.ErrUnauthorized},
		{PlainTextPassword(""), hla.ErrUnauthorized},
		{nil, hla.ErrUnauthorized},
		{&pb.Credentials{Type: NoCredentialsType}, hla.ErrUnauthorized},
		{&pb.Credentials{Type: "HLAkerberos", Data: []byte("s3cret")}, hla.ErrUnauthorized},
		{&pb.Credentials{Type: PlainTextPasswordType, Data: []byte("s3cret")}, hla.ErrInvalidCredentials},
	} {
		who, err := p.Authenticate(tc.creds)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("Authenticate(%v) = %v, want %v", tc.creds, err, tc.want)
		}
		if who != "" {
			matched = append(matched, who)
		}
	}
	if strings.Join(matched, ",") != "alice,bob" {
		t.Errorf("matched entries %v, want alice,bob", matched)
	}

	for _, bad := range []string{"", "# only a comment", "alice", ":" + strings.TrimPrefix(alice, "alice:"), "alice:plaintext", alice + "\n" + strings.Replace(bob, "bob", "alice", 1)} {
		if _, err := ParsePasswords(strings.NewReader(bad)); err == nil {
			t.Errorf("ParsePasswords(%q) accepted", bad)
		}
	}
	for _, name := range []string{"", "a:b", "a b", "#a"} {
		if _, err := HashPassword(name, "pw", bcrypt.MinCost); err == nil {
			t.Errorf("HashPassword name %q accepted", name)
		}
	}
	if _, err := HashPassword("a", "", bcrypt.MinCost); err == nil {
		t.Error("HashPassword accepted an empty password")
	}
	if _, err := HashPassword("a", strings.Repeat("x", 73), bcrypt.MinCost); err == nil {
		t.Error("HashPassword accepted 73 bytes, which bcrypt would cut")
	}
}

// With Config.Authenticate, each form of Connect passes its credentials
// (none for Connect and Connect With Configuration); a refused connect
// answers Unauthorized (or InvalidCredentials) and leaves the session
// unconnected, so that it can try again and nothing else is served
// before.
func TestConnectAuthenticated(t *testing.T) {
	p := testPasswords(t, hashLine(t, "a", "right"))
	h := NewHost(Config{Authenticate: p.Authenticate})
	defer h.Close()
	s := h.NewSession(func([]byte) error { return nil })
	defer s.Close(nil)
	call := func(req *pb.CallRequest) *pb.ExceptionData {
		t.Helper()
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		var resp pb.CallResponse
		if err := proto.Unmarshal(s.Call(b), &resp); err != nil {
			t.Fatal(err)
		}
		return resp.GetExceptionData()
	}
	wrong, right := PlainTextPassword("wrong"), PlainTextPassword("right")
	withCreds := func(c *pb.Credentials) *pb.CallRequest {
		return &pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithCredentialsRequest{ConnectWithCredentialsRequest: &pb.ConnectWithCredentialsRequest{Credentials: c}}}
	}
	for _, tc := range []struct {
		req  *pb.CallRequest
		want string
	}{
		{&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}}, "Unauthorized"},
		{&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithConfigurationRequest{ConnectWithConfigurationRequest: &pb.ConnectWithConfigurationRequest{}}}, "Unauthorized"},
		{withCreds(nil), "Unauthorized"},
		{withCreds(wrong), "Unauthorized"},
		{withCreds(&pb.Credentials{Type: PlainTextPasswordType, Data: []byte{0, 0, 0, 9}}), "InvalidCredentials"},
		{&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithConfigurationAndCredentialsRequest{ConnectWithConfigurationAndCredentialsRequest: &pb.ConnectWithConfigurationAndCredentialsRequest{Credentials: wrong}}}, "Unauthorized"},
		{&pb.CallRequest{CallRequest: &pb.CallRequest_ListFederationExecutionsRequest{ListFederationExecutionsRequest: &pb.ListFederationExecutionsRequest{}}}, "NotConnected"},
		{&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithConfigurationAndCredentialsRequest{ConnectWithConfigurationAndCredentialsRequest: &pb.ConnectWithConfigurationAndCredentialsRequest{Credentials: right}}}, ""},
		{withCreds(right), "AlreadyConnected"},
		{&pb.CallRequest{CallRequest: &pb.CallRequest_DisconnectRequest{DisconnectRequest: &pb.DisconnectRequest{}}}, ""},
		{withCreds(right), ""},
	} {
		e := call(tc.req)
		if e.GetExceptionName() != tc.want {
			t.Fatalf("%v: exception %q (%s), want %q", tc.req, e.GetExceptionName(), e.GetDetails(), tc.want)
		}
	}
}

// An Authenticator's error that wraps no exception is Unauthorized: a
// broken check never lets a connect through.
func TestConnectAuthenticatorError(t *testing.T) {
	h := NewHost(Config{Authenticate: func(*pb.Credentials) (string, error) { return "", errors.New("the check failed") }})
	defer h.Close()
	s := h.NewSession(func([]byte) error { return nil })
	defer s.Close(nil)
	b, _ := proto.Marshal(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithCredentialsRequest{ConnectWithCredentialsRequest: &pb.ConnectWithCredentialsRequest{Credentials: PlainTextPassword("x")}}})
	var resp pb.CallResponse
	if err := proto.Unmarshal(s.Call(b), &resp); err != nil {
		t.Fatal(err)
	}
	if e := resp.GetExceptionData(); e.GetExceptionName() != "Unauthorized" || !strings.Contains(e.GetDetails(), "the check failed") {
		t.Fatalf("exception %v, want Unauthorized naming the failure", e)
	}
}
