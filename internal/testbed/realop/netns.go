package realop

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// isolatedNet is a network namespace of its own with only its loopback
// interface, for a server that binds every interface and has no option to
// bind one (the operator's webhook: FlinkOperatorWebhook.run calls
// ServerBootstrap.bind(port), the wildcard address). Inside it "every
// interface" is a loopback no other host can reach. The test bed connects
// it with the host's loopback through TCP forwarders of its own: a port of
// the host's 127.0.0.1 to one inside, and one inside to the host's.
//
// Entering a network namespace needs CAP_SYS_ADMIN (setns(2), "Changing
// the network namespace"): as root, as CI runs. A thread that entered it
// is never returned to the Go scheduler (its goroutine ends locked, which
// ends the thread), so no other goroutine runs there by accident.
type isolatedNet struct {
	fd int // /proc/<pid>/task/<tid>/ns/net, open: keeps the namespace alive

	mu        sync.Mutex
	listeners []net.Listener
}

// ErrNoNetns: this process may not make a network namespace.
var ErrNoNetns = errors.New("making a network namespace needs root (CAP_SYS_ADMIN)")

func newIsolatedNet() (*isolatedNet, error) {
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			if errors.Is(err, unix.EPERM) {
				err = fmt.Errorf("%w: %v", ErrNoNetns, err)
			}
			ch <- result{err: err}
			return
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: err}
			return
		}
		// A new network namespace has its loopback interface down
		// (network_namespaces(7)); bring it up (SIOCSIFFLAGS, netdevice(7)).
		if err := loopbackUp(); err != nil {
			_ = unix.Close(fd)
			ch <- result{err: fmt.Errorf("loopback up: %w", err)}
			return
		}
		ch <- result{fd: fd}
	}()
	r := <-ch
	if r.err != nil {
		return nil, r.err
	}
	return &isolatedNet{fd: r.fd}, nil
}

func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(s) }()
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr)
}

// do runs fn on a thread inside the namespace: sockets it opens and
// processes it starts (fork copies the calling thread's namespaces,
// clone(2)) belong to the namespace.
func (n *isolatedNet) do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := unix.Setns(n.fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("entering the network namespace: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// forwardIn makes inside's 127.0.0.1:port reach the host's 127.0.0.1:port
// (e.g. the API server, for a kubeconfig that names it).
func (n *isolatedNet) forwardIn(port int) error {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var ln net.Listener
	if err := n.do(func() (err error) { ln, err = net.Listen("tcp", addr); return err }); err != nil {
		return err
	}
	n.keep(ln)
	go serveForward(ln, func() (net.Conn, error) { return net.DialTimeout("tcp", addr, 10*time.Second) })
	return nil
}

// forwardOut listens on a free port of the host's 127.0.0.1 and forwards
// each connection to inside's 127.0.0.1:port. It returns the host's port.
func (n *isolatedNet) forwardOut(port int) (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	n.keep(ln)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	go serveForward(ln, func() (c net.Conn, err error) {
		err = n.do(func() (err error) { c, err = net.DialTimeout("tcp", addr, 10*time.Second); return err })
		return c, err
	})
	addrPort, err := netip.ParseAddrPort(ln.Addr().String())
	if err != nil {
		return 0, err
	}
	return int(addrPort.Port()), nil
}

func (n *isolatedNet) keep(ln net.Listener) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.listeners = append(n.listeners, ln)
}

// Close stops the forwarders and lets the namespace go once the processes
// started in it have ended.
func (n *isolatedNet) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ln := range n.listeners {
		_ = ln.Close()
	}
	n.listeners = nil
	if n.fd > 0 {
		_ = unix.Close(n.fd)
		n.fd = -1
	}
}

func serveForward(ln net.Listener, dial func() (net.Conn, error)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { _ = c.Close() }()
			up, err := dial()
			if err != nil {
				return
			}
			defer func() { _ = up.Close() }()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, c); closeWrite(up); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
