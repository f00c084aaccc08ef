#!/usr/bin/env python3
"""Hostile and heavy HTTP clients for test_metrics_load.sh.

  http_load.py slow HOST PORT N SECONDS
      keeps N connections open for SECONDS, each with half a request sent and
      one more byte every 5 s (past any idle timeout); a connection the
      server closes is opened again at the next round (every 0.5 s), as a
      persistent attacker would.  Prints what it did.
  http_load.py silent HOST PORT N SECONDS
      the same, sending nothing at all.
  http_load.py fast HOST PORT N SECONDS PATH
      N threads GET PATH as fast as they can over keep-alive connections
      for SECONDS (a new connection when the server closes one).  Prints the
      requests answered and the errors.
"""
import http.client
import socket
import sys
import threading
import time


def slow(host, port, n, seconds, silent):
    socks = [None] * n
    opened = closed = 0
    end = time.monotonic() + seconds
    next_byte = time.monotonic() + 5
    while time.monotonic() < end:
        for i in range(n):
            if socks[i] is None:
                try:
                    s = socket.create_connection((host, port), timeout=2)
                    if not silent:
                        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    s.setblocking(False)
                    socks[i] = s
                    opened += 1
                except OSError:
                    pass
                continue
            try:
                # closed by the server: EOF, or a reset
                if socks[i].recv(1) == b"":
                    raise ConnectionError
            except BlockingIOError:
                continue
            except OSError:
                pass
            socks[i].close()
            socks[i] = None
            closed += 1
        if time.monotonic() >= next_byte and not silent:
            for s in socks:
                try:
                    if s is not None:
                        s.send(b"x")
                except OSError:
                    pass
            next_byte = time.monotonic() + 5
        time.sleep(0.5)
    held = sum(s is not None for s in socks)
    print(f"{'silent' if silent else 'slow'}: {opened} connections opened, {closed} closed by the server, {held} open at the end")


def fast(host, port, n, seconds, path):
    done = [0] * n
    errors = [0] * n
    end = time.monotonic() + seconds

    def client(i):
        conn = None
        while time.monotonic() < end:
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(host, port, timeout=5)
                conn.request("GET", path)
                r = conn.getresponse()
                r.read()
                if r.status == 200:
                    done[i] += 1
                else:
                    errors[i] += 1
            except (OSError, http.client.HTTPException):
                errors[i] += 1
                if conn is not None:
                    conn.close()
                conn = None

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"fast: {sum(done)} requests answered ({sum(done) / seconds:.0f}/s), {sum(errors)} errors or closed connections")


if __name__ == "__main__":
    mode, host, port, n, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    if mode in ("slow", "silent"):
        slow(host, port, n, seconds, mode == "silent")
    else:
        fast(host, port, n, seconds, sys.argv[6])
