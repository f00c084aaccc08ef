// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// go_labels: goroutines burning CPU inside pprof.Do spans, for
// tests/integration/test_go_labels.sh.  Goroutine k runs its spans one
// after the other; span i has span_id = 14 hex digits of i, then the byte
// 2k + i%2, and does its work in work<k>_<i%2>: a sample's span_id names
// the one function it may have on the stack, so a label read from another
// goroutine, or left from the goroutine's previous span, is caught.
// Between spans, between() burns without labels.  Goroutine 2's spans
// carry 9 labels (a map of two buckets), goroutine 3's a value longer than
// the collector takes (left out, counted as truncated).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var sink uint64

//go:noinline
func spin(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// burn spins in chunks until @d has passed
//
//go:noinline
func burn(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		atomic.AddUint64(&sink, spin(20000))
	}
}

//go:noinline
func work0_0(d time.Duration) { burn(d) }

//go:noinline
func work0_1(d time.Duration) { burn(d) }

//go:noinline
func work1_0(d time.Duration) { burn(d) }

//go:noinline
func work1_1(d time.Duration) { burn(d) }

//go:noinline
func work2_0(d time.Duration) { burn(d) }

//go:noinline
func work2_1(d time.Duration) { burn(d) }

//go:noinline
func work3_0(d time.Duration) { burn(d) }

//go:noinline
func work3_1(d time.Duration) { burn(d) }

//go:noinline
func between(d time.Duration) { burn(d) }

var works = [4][2]func(time.Duration){
	{work0_0, work0_1}, {work1_0, work1_1}, {work2_0, work2_1}, {work3_0, work3_1},
}

func worker(k int, end time.Time, span, gap time.Duration) {
	for i := 1; time.Now().Before(end); i++ {
		id := fmt.Sprintf("%014x%02x", i, 2*k+i%2)
		labels := []string{"span_id", id, "span_name", fmt.Sprintf("work%d", k)}
		switch k {
		case 2:
			for j := 1; j <= 7; j++ {
				labels = append(labels, fmt.Sprintf("key%d", j), fmt.Sprintf("value%d", j))
			}
		case 3:
			labels = append(labels, "payload", strings.Repeat("x", 200))
		}
		pprof.Do(context.Background(), pprof.Labels(labels...), func(context.Context) {
			works[k][i%2](span)
		})
		between(gap)
	}
}

func main() {
	seconds := flag.Float64("seconds", 10, "how long to run")
	flag.Parse()
	end := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			worker(k, end, 20*time.Millisecond, 5*time.Millisecond)
		}(k)
	}
	wg.Wait()
	fmt.Fprintln(os.Stderr, "go_labels: done", atomic.LoadUint64(&sink) != 0)
}
