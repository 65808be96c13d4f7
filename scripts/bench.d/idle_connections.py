#!/usr/bin/env python3
"""Open N keep-alive connections to 127.0.0.1:PORT, one GET /healthz each, then hold them.

Prints "held=N" once all are open and answered, then waits for SIGTERM (or HOLD seconds)
and closes them. Bounded: at most N connections, at most HOLD seconds."""
import selectors, signal, socket, sys, time

port, count, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
request = b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n"
sockets, answered = [], 0
sel = selectors.DefaultSelector()
for i in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(False)
    s.send(request)
    sockets.append(s)
    sel.register(s, selectors.EVENT_READ)
deadline = time.time() + 60
while answered < count and time.time() < deadline:
    for key, _ in sel.select(timeout=1):
        data = key.fileobj.recv(4096)
        if data.startswith(b"HTTP/1.1 200"):
            answered += 1
        sel.unregister(key.fileobj)
print(f"held={answered}", flush=True)
stop = time.time() + hold
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
while time.time() < stop:
    time.sleep(0.2)
