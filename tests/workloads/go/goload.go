// goload: a Go workload with known hot functions, for the collector's Go
// tests (tests/integration/test_go.sh, tests/unit/test_gopclntab.c).
//
// One process runs an HTTP server and its client on the loopback, a few
// goroutines that spin in goSpinLeaf (called through goSpinMid, so the stack
// has a known shape), and one that allocates garbage, so that the garbage
// collector's workers run on the system stack.  It stops after the number of
// seconds given as its first argument (default 10).
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

var sink []byte

//go:noinline
func goSpinLeaf(n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x += uint64(i)*uint64(i) ^ x>>3
	}
	return x
}

//go:noinline
func goSpinMid(n int) uint64 {
	return goSpinLeaf(n) + 1
}

// goInlined is small enough to be inlined into its caller, goSpinInline.
func goInlined(x uint64, i int) uint64 {
	return x*31 + uint64(i)
}

//go:noinline
func goSpinInline(n int) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		x = goInlined(x, i)
	}
	return x
}

//go:noinline
func goAllocate() {
	for i := 0; i < 64; i++ {
		sink = make([]byte, 4096+i)
	}
}

func goHandler(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "%d\n", goSpinMid(20000))
}

func main() {
	secs := 10
	if len(os.Args) > 1 {
		if v, err := strconv.Atoi(os.Args[1]); err == nil {
			secs = v
		}
	}
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "goload:", err)
		os.Exit(1)
	}
	go http.Serve(ln, http.HandlerFunc(goHandler))
	url := "http://" + ln.Addr().String() + "/"
	var wg sync.WaitGroup
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				resp, err := http.Get(url)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for time.Now().Before(deadline) {
			goSpinMid(1000000)
			goSpinInline(1000000)
		}
	}()
	go func() {
		defer wg.Done()
		for time.Now().Before(deadline) {
			goAllocate()
		}
	}()
	fmt.Printf("goload: pid %d\n", os.Getpid())
	wg.Wait()
}
