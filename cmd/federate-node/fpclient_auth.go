package main

import (
	"crypto/tls"
	"net"
	"time"

	"github.com/meshrti/meshrti/peer/fedpro"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// dialFedProTLS connects to a `serve` TLS listener and opens a session.
// cfg says which servers to trust (RootCAs, ServerName) and, for a
// daemon with -client-ca, the client certificate (Certificates). A
// daemon that refuses the certificate fails the handshake: with TLS 1.3
// the client learns it only at its first read, so the error may come
// from opening the session.
func dialFedProTLS(addr string, cfg *tls.Config, onCallback func(*pb.CallbackRequest)) (*fpConn, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	return openFedPro(conn, onCallback)
}

// connectCall is the Connect call carrying creds: Connect With
// Credentials, or plain Connect when creds is nil.
func connectCall(creds *pb.Credentials) *pb.CallRequest {
	if creds == nil {
		return &pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}}
	}
	return &pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithCredentialsRequest{ConnectWithCredentialsRequest: &pb.ConnectWithCredentialsRequest{Credentials: creds}}}
}

// connectWithPassword connects the session with HLA 4 plain-text
// password credentials, as Pitch's and MAK's clients send them.
func (c *fpConn) connectWithPassword(password string) error {
	_, err := c.call(connectCall(fedpro.PlainTextPassword(password)))
	return err
}
