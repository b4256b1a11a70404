package cluster

import (
	"net"
	"strconv"
	"testing"
)

// freePort answers ports below the kernel's ephemeral range (where outgoing connections
// take their source ports), each one a component can listen on, and never one that is
// taken.
func TestFreePortIsBelowTheEphemeralRangeAndFree(t *testing.T) {
	first, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(first)) // held for the whole test
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	for range 200 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < portLow || port > portHigh {
			t.Fatalf("port %d, want one in %d-%d", port, portLow, portHigh)
		}
		if port == taken.Addr().(*net.TCPAddr).Port {
			t.Fatalf("port %d is taken", port)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("listen on the port picked: %v", err)
		}
		_ = l.Close()
	}
}
