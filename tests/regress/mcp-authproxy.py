#!/usr/bin/env python3
# mcp-authproxy.py UPSTREAM_PORT TOKEN PORTFILE: a loopback HTTP proxy for
# mcp-conformance.sh that adds serve's bearer token to every request (the
# conformance CLI cannot send one) and passes all else as it came (Host,
# Origin: the DNS-rebinding scenario's headers reach serve, the proxy's
# port in them made serve's), answers streamed back as they arrive.  Its
# port is written to PORTFILE.
import http.client
import http.server
import socketserver
import sys

UP, TOKEN, PORTFILE = int(sys.argv[1]), sys.argv[2], sys.argv[3]
HOP = {"connection", "keep-alive", "transfer-encoding", "authorization",
       "content-length", "proxy-connection"}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"   # every answer ends with the close

    def log_message(self, fmt, *args):
        pass

    def relay(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        up = http.client.HTTPConnection("127.0.0.1", UP, timeout=600)
        up.putrequest(self.command, self.path, skip_host=True,
                      skip_accept_encoding=True)
        me = ":%d" % self.server.server_address[1]
        for k, v in self.headers.items():
            # serve's port for ours in Host and Origin: serve judges an
            # Origin's port, and sees what the CLI would send it direct
            if k.lower() in ("host", "origin") and v.endswith(me):
                v = v[:-len(me)] + ":%d" % UP
            if k.lower() not in HOP:
                up.putheader(k, v)
        up.putheader("Authorization", "Bearer " + TOKEN)
        up.putheader("Content-Length", str(len(body)))
        up.endheaders(body)
        r = up.getresponse()
        self.send_response_only(r.status, r.reason)
        for k, v in r.getheaders():
            if k.lower() not in HOP or k.lower() == "content-length":
                self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while True:
                chunk = r.read1(65536)
                if not chunk:
                    break
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:
            pass
        up.close()

    do_GET = do_POST = do_DELETE = do_PUT = do_HEAD = relay


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Proxy)
with open(PORTFILE + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
import os  # noqa: E402
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
