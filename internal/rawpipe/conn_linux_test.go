package rawpipe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/codemode-mcp/codemode-mcp/internal/fixture"
)

// tcpPair returns a Conn dialled to a listener on 127.0.0.1 and the
// listener's (plain net) end of the same connection.
func tcpPair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			c = nil
		}
		accepted <- c
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	c, ok := WrapConn(d.(*net.TCPConn), Spin).(*Conn)
	if !ok {
		t.Fatal("WrapConn did not return a *Conn on Linux")
	}
	t.Cleanup(func() { _ = c.Close(); _ = peer.Close() })
	return c, peer
}

// TestConnCarriesMoreThanTheSocketHolds sends megabytes both ways at once
// between a Conn and a plain net.Conn: writes wait while the socket's
// buffers are full, reads while nothing has arrived, every byte arrives in
// order, and a half-close reads as EOF.
func TestConnCarriesMoreThanTheSocketHolds(t *testing.T) {
	c, peer := tcpPair(t)
	up := make([]byte, 8<<20)
	down := make([]byte, 8<<20)
	for i := range up {
		up[i], down[i] = byte(i*7), byte(i*13)
	}
	var wg sync.WaitGroup
	var upErr, downErr error
	var gotUp []byte
	wg.Add(3)
	go func() { // Conn writes, then half-closes
		defer wg.Done()
		if _, upErr = c.Write(up); upErr == nil {
			upErr = c.CloseWrite()
		}
	}()
	go func() { // the plain end reads what the Conn wrote
		defer wg.Done()
		gotUp, _ = io.ReadAll(peer)
	}()
	go func() { // the plain end writes, then half-closes
		defer wg.Done()
		if _, downErr = peer.Write(down); downErr == nil {
			downErr = peer.(*net.TCPConn).CloseWrite()
		}
	}()
	gotDown, err := io.ReadAll(c)
	wg.Wait()
	if err != nil || upErr != nil || downErr != nil {
		t.Fatalf("read %v, Conn write %v, peer write %v", err, upErr, downErr)
	}
	if !bytes.Equal(gotUp, up) || !bytes.Equal(gotDown, down) {
		t.Fatalf("up %d/%d bytes, down %d/%d bytes, or not in order", len(gotUp), len(up), len(gotDown), len(down))
	}
}

// TestConnReadDeadline checks that a read waiting in the poller ends with
// a timeout when its deadline passes, as net.Conn's does.
func TestConnReadDeadline(t *testing.T) {
	c, _ := tcpPair(t)
	if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	n, err := c.Read(make([]byte, 16))
	var ne net.Error
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read = %d, %v; want 0 and a timeout", n, err)
	}
}

// TestConnCloseEndsWaitingRead checks that closing a Conn ends a read
// waiting in the poller with net.ErrClosed (how a cancelled request stops).
func TestConnCloseEndsWaitingRead(t *testing.T) {
	c, _ := tcpPair(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 16))
		done <- err
	}()
	waitInPoller(t, "rawpipe.(*Conn).Read")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fixture.Wait(t, "the end of the Read after Close", done); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close = %v; want net.ErrClosed", err)
	}
}

// TestConnPeerReset checks that a peer that goes away is an error or EOF
// on the Conn, never a hang or a panic: a write to a reset connection
// fails with a *net.OpError naming the operation.
func TestConnPeerReset(t *testing.T) {
	c, peer := tcpPair(t)
	_ = peer.(*net.TCPConn).SetLinger(0) // close with RST
	_ = peer.Close()
	if n, err := c.Read(make([]byte, 16)); n != 0 || err == nil {
		t.Fatalf("Read from a reset peer = %d, %v; want an error", n, err)
	}
	var err error
	for range 100 { // the first writes may still be buffered
		if _, err = c.Write(make([]byte, 64<<10)); err != nil {
			break
		}
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" {
		t.Fatalf("Write to a reset peer = %v; want a *net.OpError for write", err)
	}
}

// TestConnStress runs many request/answer exchanges at once over Conns to
// an echo server, with frames of random sizes; some clients close their
// Conn mid-exchange, and for others the server cuts the connection (a
// close or a reset) after a random number of bytes. Every completed
// exchange echoes exactly what was sent; an interrupted one ends with an
// error, never a hang (the suite runs it under -race too).
func TestConnStress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var servers sync.WaitGroup
	servers.Add(1)
	go func() {
		defer servers.Done()
		for n := uint64(0); ; n++ {
			s, err := ln.Accept()
			if err != nil {
				return
			}
			servers.Add(1)
			go func() {
				defer servers.Done()
				defer s.Close()
				var mode [1]byte
				if _, err := io.ReadFull(s, mode[:]); err != nil {
					return
				}
				if mode[0] == 'e' {
					_, _ = io.Copy(s, s) // echo until the client closes
					return
				}
				rng := rand.New(rand.NewPCG(n, 2))
				_, _ = io.CopyN(s, s, rng.Int64N(512<<10))
				if rng.IntN(2) == 0 {
					_ = s.(*net.TCPConn).SetLinger(0) // cut with a reset
				}
			}()
		}
	}()
	const clients, rounds = 12, 40
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- stressClient(ln.Addr().String(), i, rounds)
		}()
	}
	wg.Wait()
	ln.Close()
	servers.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// stressClient is one client of TestConnStress: i%3 == 0 closes its own
// Conn during a random round, i%3 == 1 asks the server to cut, and the
// rest must complete every round.
func stressClient(addr string, i, rounds int) error {
	rng := rand.New(rand.NewPCG(uint64(i), 1))
	d, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	c := WrapConn(d.(*net.TCPConn), Spin)
	defer c.Close()
	selfClose, serverCuts := i%3 == 0, i%3 == 1
	mode := []byte{'e'}
	if serverCuts {
		mode[0] = 'c'
	}
	if _, err := c.Write(mode); err != nil {
		return err
	}
	closeAt := rng.IntN(rounds)
	for r := range rounds {
		msg := make([]byte, 1+rng.IntN(64<<10))
		for j := range msg {
			msg[j] = byte(rng.Uint32())
		}
		if selfClose && r == closeAt {
			delay := time.Duration(rng.IntN(200)) * time.Microsecond
			go func() { time.Sleep(delay); c.Close() }()
		}
		werr := make(chan error, 1)
		go func() { _, err := c.Write(msg); werr <- err }()
		got := make([]byte, len(msg))
		_, rerr := io.ReadFull(c, got)
		if rerr != nil {
			c.Close() // a writer still waiting for room must end too
		}
		err := errors.Join(<-werr, rerr)
		switch {
		case err == nil && !bytes.Equal(got, msg):
			return fmt.Errorf("client %d round %d: the echo differs", i, r)
		case err == nil:
			continue
		case selfClose && r >= closeAt && errors.Is(err, net.ErrClosed):
			return nil // the close this client made
		case serverCuts:
			return nil // any error: the server cut the connection
		}
		return fmt.Errorf("client %d round %d: %w", i, r, err)
	}
	if serverCuts {
		return nil // the cut came after the last round
	}
	if selfClose { // the close came after the last exchange: it must end a waiting read
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("client %d: read after closing = %v; want net.ErrClosed", i, err)
		}
	}
	return nil
}
