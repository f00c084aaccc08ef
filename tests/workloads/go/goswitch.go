// goswitch: a Go workload that spends its time where the runtime switches
// stacks, for tests/integration/test_go_switch.sh: each kind of switch
// under a known function of its own.
//
//   - goAllocate: garbage, so that mallocgc assists the collector and grows
//     the heap on the system stack (runtime.systemstack), beside the
//     collector's own workers;
//   - goDeepRecurse: new goroutines recursing with large frames, so that
//     their stacks grow (runtime.morestack, then newstack on g0);
//   - goClock: time.Now and time.Since in a loop (the vDSO, called on g0's
//     stack by time.now and runtime.nanotime1);
//   - goPingPong: two goroutines handing a value back and forth on
//     unbuffered channels, so that each parks (runtime.mcall, park_m) and
//     the scheduler runs on g0.
//
// It stops after the number of seconds given as its first argument
// (default 10).
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

var sink []byte
var sinkN uint64

//go:noinline
func goAllocate() {
	for i := 0; i < 64; i++ {
		sink = make([]byte, 4096+i)
	}
}

//go:noinline
func goDeepRecurse(n int) uint64 {
	var pad [1024]byte
	pad[n%1024] = byte(n)
	if n == 0 {
		return uint64(pad[0])
	}
	return goDeepRecurse(n-1) + uint64(pad[n%1024])
}

//go:noinline
func goGrowStacks() {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sinkN += goDeepRecurse(80)
		}()
	}
	wg.Wait()
}

//go:noinline
func goClock() time.Duration {
	var d time.Duration
	start := time.Now()
	for i := 0; i < 1000; i++ {
		d += time.Since(start)
		start = time.Now()
	}
	return d
}

//go:noinline
func goPingPong(in, out chan int, n int) {
	for i := 0; i < n; i++ {
		v := <-in
		out <- v + 1
	}
}

func main() {
	secs := 10
	if len(os.Args) > 1 {
		if v, err := strconv.Atoi(os.Args[1]); err == nil {
			secs = v
		}
	}
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	loop := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				f()
			}
		}()
	}
	loop(goAllocate)
	loop(goGrowStacks)
	loop(func() { sinkN += uint64(goClock()) })
	a, b := make(chan int), make(chan int)
	go goPingPong(a, b, 1<<62)
	loop(func() {
		for i := 0; i < 1000; i++ {
			a <- i
			<-b
		}
	})
	fmt.Printf("goswitch: pid %d\n", os.Getpid())
	wg.Wait()
}
