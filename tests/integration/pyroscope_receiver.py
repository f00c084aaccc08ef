#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A Pyroscope ingest endpoint for the tests: POST /ingest as Grafana
Pyroscope's HTTP handler takes it (pkg/ingester/pyroscope/ingest_handler.go,
pkg/og/convert/pprof/profile.go, api/model/labelset):

  name     required; app{k=v,...}: the app [A-Za-z0-9_.-/], keys
           [A-Za-z0-9_.], a value ends at ',' or '}'; else 400
  from, until  UNIX time: all digits, the unit by their count (13 ms, 16 us,
           19 ns, else seconds); absent: now
  body     multipart/form-data (no format): file parts `profile` (pprof,
           gzipped or not), `prev_profile`, `sample_type_config` (JSON);
           with format=pprof the whole body is one pprof; a part without a
           filename is not read (Go's multipart.Form.File)
  answer   200 stored; 400 bad name; 401 missing or wrong credentials when
           the test sets some; 422 a body that is not a profile

It stores what it gets and nothing else: DIR/NNNNNN.pb (the profile as
sent) and DIR/NNNNNN.json (name, labels, from, until, sample_type_config,
tenant, when).  Every request, stored or not, is a line of DIR/requests.log
(time, status, name, from).  What it answers besides is the test's to
choose, by DIR/mode (read at each request):
  ok | 500 | 400 | 429 SECONDS (with Retry-After) | slow SECONDS (then
  answers ok) | reset (the connection is reset, no answer)
"""
import argparse
import gzip
import json
import os
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

APP = re.compile(r'^[A-Za-z0-9_.\-/]+$')
KEY = re.compile(r'^[A-Za-z0-9_.]+$')
LOCK = threading.Lock()


class BadName(Exception):
    pass


def parse_name(name):
    """labelset.Parse: app{k=v,...}"""
    if '{' not in name:
        app, labels = name, ''
    else:
        if not name.endswith('}'):
            raise BadName('no closing brace')
        app, labels = name[:name.index('{')], name[name.index('{') + 1:-1]
    app = app.strip()
    if not APP.match(app):
        raise BadName('bad application name %r' % app)
    out = {'__name__': app}
    for kv in filter(None, (s.strip() for s in labels.split(','))):
        if '=' not in kv:
            raise BadName('label %r without =' % kv)
        k, v = kv.split('=', 1)
        k, v = k.strip(), v.strip()
        if not KEY.match(k):
            raise BadName('bad label key %r' % k)
        out[k] = v
    return out


def parse_time(s):
    """attime.Parse for digits: the unit by the count"""
    if s is None:
        return time.time()
    if not s.isdigit():
        raise BadName('time %r' % s)
    n = int(s)
    return {13: n / 1e3, 16: n / 1e6, 19: n / 1e9}.get(len(s), float(n))


def multipart_files(ctype, body):
    """the file parts of a multipart/form-data body, by field name (RFC 7578,
    as Go's mime/multipart reads it: a part without filename is no file)"""
    m = re.search(r'boundary="?([^";]+)"?', ctype)
    if not m:
        raise ValueError('no boundary')
    delim = b'--' + m.group(1).encode()
    chunks = body.split(b'\r\n' + delim)
    if not chunks[0].startswith(delim):
        raise ValueError('the body does not begin with its boundary')
    chunks[0] = chunks[0][len(delim):]
    files, closed = {}, False
    for chunk in chunks:
        if chunk.startswith(b'--'):
            closed = True
            break
        if not chunk.startswith(b'\r\n'):
            raise ValueError('a boundary not ending its line')
        head, sep, data = chunk[2:].partition(b'\r\n\r\n')
        if not sep:
            raise ValueError('a part without headers')
        disp = ''
        for line in head.decode('latin-1').split('\r\n'):
            k, _, v = line.partition(':')
            if k.strip().lower() == 'content-disposition':
                disp = v
        name = re.search(r'\bname="([^"]*)"', disp)
        if name and re.search(r'\bfilename="', disp):
            files[name.group(1)] = data
    if not closed:
        raise ValueError('no closing boundary')
    return files


def looks_like_pprof(data):
    """gzip or a protobuf whose first field is a known one of Profile"""
    if data[:2] == b'\x1f\x8b':
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            return False
    return len(data) > 0 and (data[0] >> 3) in range(1, 15) and (data[0] & 7) in (0, 2)


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, text='', headers=()):
        body = (json.dumps({'code': code, 'message': text}) if text else '').encode()
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_request_line(self, status, name, frm):
        with LOCK, open(os.path.join(self.server.store, 'requests.log'), 'a') as f:
            f.write('%.3f %d %s %s\n' % (time.time(), status, name, frm))

    def do_GET(self):
        self.answer(404, 'not found')

    def do_POST(self):
        url = urlsplit(self.path)
        length = int(self.headers.get('Content-Length', 0))
        body = self.rfile.read(length)
        if url.path not in ('/ingest', '/pyroscope/ingest'):
            return self.answer(404, 'not found')
        q = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        mode = self.server.mode()
        if mode[0] == 'reset':
            # an RST, not an answer
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack('ii', 1, 0))
            self.log_request_line(0, q.get('name', ''), q.get('from', ''))
            self.close_connection = True
            self.connection.close()
            return
        if mode[0] == 'slow':
            time.sleep(float(mode[1]))
        status = self.ingest(q, body, mode)
        self.log_request_line(status, q.get('name', ''), q.get('from', ''))

    def ingest(self, q, body, mode):
        if mode[0] == '500':
            self.answer(500, 'the store is down')
            return 500
        if mode[0] == '429':
            self.answer(429, 'ingestion rate limit', [('Retry-After', mode[1])])
            return 429
        if mode[0] == '400':
            self.answer(400, 'refused by the test')
            return 400
        want = self.server.auth
        if want and self.headers.get('Authorization') != want:
            self.answer(401, 'unauthorized')
            return 401
        try:
            labels = parse_name(q.get('name', ''))
            t_from, t_until = parse_time(q.get('from')), parse_time(q.get('until'))
        except BadName as e:
            self.answer(400, 'name: %s' % e)
            return 400
        ctype = self.headers.get('Content-Type', '')
        try:
            if q.get('format') == 'pprof':
                files = {'profile': body}
            elif 'multipart/form-data' in ctype:
                files = multipart_files(ctype, body)
            else:
                raise ValueError('not a pprof upload')
            profile = files.get('profile')
            config = json.loads(files['sample_type_config']) \
                if 'sample_type_config' in files else None
            if not profile or not looks_like_pprof(profile):
                raise ValueError('no profile')
        except (ValueError, KeyError) as e:
            self.answer(422, str(e))
            return 422
        with LOCK:
            self.server.seq += 1
            seq = self.server.seq
        base = os.path.join(self.server.store, '%06d' % seq)
        with open(base + '.pb', 'wb') as f:
            f.write(profile)
        with open(base + '.json', 'w') as f:
            json.dump({'name': q.get('name'), 'labels': labels, 'from': t_from,
                       'until': t_until, 'sample_type_config': config,
                       'tenant': self.headers.get('X-Scope-OrgID'),
                       'spy': q.get('spyName'), 'received': time.time()}, f)
        self.answer(200)
        return 200


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def mode(self):
        try:
            with open(os.path.join(self.store, 'mode')) as f:
                words = f.read().split()
        except OSError:
            words = []
        return words or ['ok']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--port', type=int, required=True)
    ap.add_argument('--store', required=True)
    ap.add_argument('--auth', help='the Authorization header it requires')
    a = ap.parse_args()
    os.makedirs(a.store, exist_ok=True)
    srv = Server(('127.0.0.1', a.port), Handler)
    srv.store, srv.auth = a.store, a.auth
    srv.seq = max([int(n[:6]) for n in os.listdir(a.store) if n.endswith('.json')] or [0])
    print('listening', flush=True)
    srv.serve_forever()


if __name__ == '__main__':
    sys.exit(main())
