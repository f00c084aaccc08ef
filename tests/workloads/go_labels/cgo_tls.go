// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

//go:build cgo_tls

// With -tags cgo_tls: cgo, with TLS variables of its own, so the program is
// linked by the C linker and g lies in its TLS block beside them (not at
// fsbase - 8): the collector finds it from runtime.tlsg.
package main

// static __thread int depth;
// static __thread long scratch[3];
// static int enter(void) { scratch[depth % 3]++; return ++depth; }
import "C"

func init() {
	C.enter()
}
