package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/meshrti/meshrti/internal/fpclient"
	"github.com/meshrti/meshrti/peer/fedpro"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// testPKI is a CA, a server certificate it signed for 127.0.0.1, a
// client certificate it signed, and a client certificate of another
// CA, made for the test.
type testPKI struct {
	dir                          string
	roots                        *x509.CertPool // trusts the CA (the client's view of the server)
	caFile, serverCert, serverKy string         // PEM files
	client, stranger             tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), roots: x509.NewCertPool()}
	serial := int64(0)
	issue := func(tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		t.Helper()
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return cert, key, der
	}
	ca := func(name string) (*x509.Certificate, *ecdsa.PrivateKey) {
		c, k, _ := issue(&x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, nil, nil)
		return c, k
	}
	tlsCert := func(der []byte, key *ecdsa.PrivateKey) tls.Certificate {
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	write := func(name string, blocks ...*pem.Block) string {
		t.Helper()
		var b bytes.Buffer
		for _, bl := range blocks {
			pem.Encode(&b, bl)
		}
		path := filepath.Join(p.dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	caCert, caKey := ca("meshrti test CA")
	p.roots.AddCert(caCert)
	p.caFile = write("ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: caCert.Raw})
	_, sk, sder := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "serve"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, caCert, caKey)
	skb, err := x509.MarshalECPrivateKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	p.serverCert = write("server.pem", &pem.Block{Type: "CERTIFICATE", Bytes: sder})
	p.serverKy = write("server-key.pem", &pem.Block{Type: "EC PRIVATE KEY", Bytes: skb})
	clientTmpl := func(name string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: name}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	}
	_, ck, cder := issue(clientTmpl("federate"), caCert, caKey)
	p.client = tlsCert(cder, ck)
	otherCA, otherKey := ca("another CA")
	_, xk, xder := issue(clientTmpl("stranger"), otherCA, otherKey)
	p.stranger = tlsCert(xder, xk)
	return p
}

// authDaemon starts a daemon on loopback with sf's authentication
// settings and the test's usual others.
func authDaemon(t *testing.T, sf *serveFlags) *daemon {
	t.Helper()
	sf.Metrics, sf.Gossip, sf.Iface, sf.SaveDir = "", "127.0.0.1:0", "lo", t.TempDir()
	sf.McastPort = 20000 + (os.Getpid()+53)%20000
	sf.ResumeWindow, sf.CallTimeout = time.Minute, 20*time.Second
	d, err := startDaemon(sf, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	return d
}

// credentialsFile writes a credentials file accepting each name=password.
func credentialsFile(t *testing.T, pairs ...string) string {
	t.Helper()
	var lines []string
	for _, p := range pairs {
		name, pw, _ := strings.Cut(p, "=")
		line, err := fedpro.HashPassword(name, pw, bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	path := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(path, []byte("# test\n"+strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// joinServe creates (if need be) and joins federation "auth" on c.
func joinServe(c *fpClient, name string) {
	c.t.Helper()
	if _, err := c.Call(serveCreate("auth")); err != nil && !strings.HasPrefix(err.Error(), "FederationExecutionAlreadyExists") {
		c.t.Fatalf("create: %v", err)
	}
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
		FederateName: name, FederateType: "auth", FederationName: "auth"}}})
}

// stillWorks checks that a joined session is served: it publishes a
// class and subscribes to it.
func stillWorks(c *fpClient) {
	c.t.Helper()
	class := c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: "Car"}}}).GetGetObjectClassHandleResponse().GetResult()
	if class == nil {
		c.t.Fatal("no handle for class Car")
	}
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{
		ObjectClass: class, Attributes: &pb.AttributeHandleSet{}}}})
}

// `serve -listen 0.0.0.0:15164` with neither TLS client certificates nor
// credentials refuses to start, naming the flags that would let it, and
// binds nothing (the check comes first).
func TestServeRefusesOpenListener(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"serve", "-listen", "0.0.0.0:15164", "-metrics", ""}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, stderr.String())
	}
	for _, want := range []string{"0.0.0.0:15164", "-credentials", "-client-ca", "-insecure", "127.0.0.1"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the refusal %q does not name %s", stderr.String(), want)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q: it said it serves", stdout.String())
	}

	for _, tc := range []struct {
		listen, tlsListen string // tlsListen "": no TLS
		creds, ca, insec  bool
		refused, warned   bool
	}{
		{listen: "127.0.0.1:15164"},
		{listen: "[::1]:15164"},
		{listen: "", tlsListen: "127.0.0.1:15165"},
		{listen: "0.0.0.0:15164", refused: true},
		{listen: ":15164", refused: true},
		{listen: "[::]:15164", refused: true},
		{listen: "192.0.2.1:15164", refused: true},
		{listen: "0.0.0.0:15164", tlsListen: "127.0.0.1:15165", ca: true, refused: true}, // the plain listener is still open
		{listen: "0.0.0.0:15164", creds: true, warned: true},                             // passwords in clear
		{listen: "0.0.0.0:15164", insec: true, warned: true},
		{listen: "127.0.0.1:15164", tlsListen: "0.0.0.0:15165", refused: true}, // TLS alone authenticates no client
		{listen: "127.0.0.1:15164", tlsListen: "0.0.0.0:15165", ca: true},
		{listen: "127.0.0.1:15164", tlsListen: "0.0.0.0:15165", creds: true},
		{listen: "", tlsListen: ":15165", creds: true, ca: true},
	} {
		sf := serveFlags{Listen: tc.listen, TLSListen: tc.tlsListen}
		if tc.creds {
			sf.Credentials = "creds"
		}
		if tc.ca {
			sf.ClientCA = "ca.pem"
		}
		sf.Insecure = tc.insec
		warned := false
		err := sf.checkExposure(tc.tlsListen != "", func(string, ...any) { warned = true })
		if (err != nil) != tc.refused || warned != tc.warned {
			t.Errorf("%+v: error %v, warned %v", tc, err, warned)
		}
	}
}

// Other refusals at start: -client-ca without a certificate to serve TLS
// with, no listener at all, a credentials file that does not parse, a
// CA file with no certificate.
func TestServeAuthStartErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("alice:not-a-hash\n"), 0o600)
	pki := newTestPKI(t)
	for _, tc := range []struct {
		sf   serveFlags
		want string
	}{
		{serveFlags{Listen: "127.0.0.1:0", serveAuthFlags: serveAuthFlags{ClientCA: pki.caFile}}, "-client-ca applies to the TLS listener"},
		{serveFlags{Listen: ""}, "no Federate Protocol listener"},
		{serveFlags{Listen: "127.0.0.1:0", serveAuthFlags: serveAuthFlags{Credentials: bad}}, "not a bcrypt hash"},
		{serveFlags{Listen: "127.0.0.1:0", serveAuthFlags: serveAuthFlags{Credentials: filepath.Join(t.TempDir(), "absent")}}, "-credentials"},
		{serveFlags{Listen: "127.0.0.1:0", TLSListen: "127.0.0.1:0", Cert: pki.serverCert, Key: pki.serverKy, serveAuthFlags: serveAuthFlags{ClientCA: bad}}, "no PEM certificate"},
	} {
		sf := tc.sf
		sf.Gossip, sf.Metrics = "127.0.0.1:0", ""
		d, err := startDaemon(&sf, t.Logf)
		if err == nil {
			d.stop()
			t.Errorf("%+v started", tc.sf)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want it to say %q", tc.sf, err, tc.want)
		}
	}
}

// With -credentials, a connect with a wrong password, with none, or with
// HLAnoCredentials answers Unauthorized, and one with the right password
// succeeds, on the same session; meanwhile another connected session
// keeps working.
func TestServeCredentials(t *testing.T) {
	d := authDaemon(t, &serveFlags{Listen: "127.0.0.1:0", serveAuthFlags: serveAuthFlags{Credentials: credentialsFile(t, "alice=s3cret", "bob=hunter2")}})
	addr := d.addrs[0].String()
	a := dialFP(t, addr)
	if err := a.ConnectWithPassword("s3cret"); err != nil {
		t.Fatalf("the right password: %v", err)
	}
	joinServe(a, "A")

	b := dialFP(t, addr)
	for _, creds := range []*pb.Credentials{fedpro.PlainTextPassword("S3CRET"), nil, {Type: fedpro.NoCredentialsType}, {Type: "HLAkerberos", Data: []byte("s3cret")}} {
		_, err := b.Call(fpclient.ConnectCall(creds))
		if err == nil || !strings.HasPrefix(err.Error(), "Unauthorized:") {
			t.Errorf("connect with %v: %v, want Unauthorized", creds, err)
		}
		stillWorks(a)
	}
	if _, err := b.Call(fpclient.ConnectCall(&pb.Credentials{Type: fedpro.PlainTextPasswordType, Data: []byte("s3cret")})); err == nil || !strings.HasPrefix(err.Error(), "InvalidCredentials:") {
		t.Errorf("a password that is no HLAunicodeString: %v, want InvalidCredentials", err)
	}
	if _, err := b.Call(serveCreate("other")); err == nil || !strings.HasPrefix(err.Error(), "NotConnected:") {
		t.Errorf("create after refused connects: %v, want NotConnected", err)
	}
	if err := b.ConnectWithPassword("hunter2"); err != nil {
		t.Fatalf("the right password after wrong ones: %v", err)
	}
	joinServe(b, "B")
	stillWorks(a)
	stillWorks(b)
	if s := d.srv.Stats(); s.Sessions != 2 || s.BadMessages != 0 {
		t.Errorf("server stats %+v: want both sessions open and no bad message", s)
	}
}

// With -client-ca, the TLS listener takes only clients whose certificate
// the CA signed: one with a certificate of another CA, or none, fails the
// handshake and opens no session, while a session already open keeps
// working. Credentials may be asked on top.
func TestServeClientCertificates(t *testing.T) {
	pki := newTestPKI(t)
	d := authDaemon(t, &serveFlags{Listen: "", TLSListen: "127.0.0.1:0", Cert: pki.serverCert, Key: pki.serverKy,
		serveAuthFlags: serveAuthFlags{ClientCA: pki.caFile, Credentials: credentialsFile(t, "site=pw")}})
	if len(d.addrs) != 1 {
		t.Fatalf("listening on %v, want the TLS listener only", d.addrs)
	}
	addr := d.addrs[0].String()
	// The client presents its certificate whichever CAs the server
	// names (Go's client would otherwise send none it cannot chain to
	// them).
	dial := func(certs ...tls.Certificate) (*fpclient.Conn, error) {
		return fpclient.DialTLS(addr, &tls.Config{RootCAs: pki.roots, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if len(certs) == 0 {
				return &tls.Certificate{}, nil
			}
			return &certs[0], nil
		}}, nil)
	}
	ac, err := dial(pki.client)
	if err != nil {
		t.Fatalf("a client with a trusted certificate: %v", err)
	}
	a := &fpClient{t, ac}
	t.Cleanup(ac.Close)
	if _, err := a.Call(fpclient.ConnectCall(nil)); err == nil || !strings.HasPrefix(err.Error(), "Unauthorized:") {
		t.Errorf("connect without the password over TLS: %v, want Unauthorized", err)
	}
	if err := a.ConnectWithPassword("pw"); err != nil {
		t.Fatal(err)
	}
	joinServe(a, "A")
	for name, certs := range map[string][]tls.Certificate{"untrusted certificate": {pki.stranger}, "no certificate": nil} {
		c, err := dial(certs...)
		if err == nil {
			c.Close()
			t.Errorf("a client with %s opened a session", name)
			continue
		}
		if !strings.Contains(err.Error(), "tls:") {
			t.Errorf("a client with %s: %v, want a TLS handshake failure", name, err)
		}
		stillWorks(a)
	}
	if s := d.srv.Stats(); s.Opened != 1 || s.Sessions != 1 {
		t.Errorf("server stats %+v: want the one session", s)
	}
}

// `serve passwd NAME` reads the password from stdin and prints the line
// that accepts it; the new flags come from a config file too.
func TestServePasswdAndConfig(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runServePasswd([]string{"-cost", "4", "carol"}, strings.NewReader("open sesame\r\n"), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	p, err := fedpro.ParsePasswords(&out)
	if err != nil {
		t.Fatal(err)
	}
	if who, err := p.Authenticate(fedpro.PlainTextPassword("open sesame")); err != nil || who != "carol" {
		t.Errorf("the printed line does not accept its password: %q, %v", who, err)
	}
	if _, err := p.Authenticate(fedpro.PlainTextPassword("open sesame\r")); err == nil {
		t.Error("the line ending became part of the password")
	}
	for _, tc := range []struct {
		args  []string
		stdin string
		code  int
	}{
		{nil, "pw\n", 2},
		{[]string{"a", "b"}, "pw\n", 2},
		{[]string{"carol"}, "", 1},
		{[]string{"carol"}, "\n", 1},
		{[]string{"a:b"}, "pw\n", 1},
	} {
		if code := runServePasswd(tc.args, strings.NewReader(tc.stdin), &out, &errb); code != tc.code {
			t.Errorf("serve passwd %q with stdin %q: exit %d, want %d", tc.args, tc.stdin, code, tc.code)
		}
	}

	cfgFile := filepath.Join(t.TempDir(), "serve.json")
	os.WriteFile(cfgFile, []byte(`{"credentials": "/etc/meshrti/credentials", "client_ca": "/etc/meshrti/ca.pem", "insecure": true}`), 0o600)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var sf serveFlags
	sf.register(fs)
	if err := sf.loadConfig(cfgFile, fs); err != nil {
		t.Fatal(err)
	}
	if sf.Credentials != "/etc/meshrti/credentials" || sf.ClientCA != "/etc/meshrti/ca.pem" || !sf.Insecure {
		t.Errorf("settings from the config file: %+v", sf.serveAuthFlags)
	}
}
