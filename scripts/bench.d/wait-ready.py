"""Waits until GET /readyz answers 200 on 127.0.0.1:PORT and prints the wall-clock time (ns) it did.

usage: wait-ready.py PORT [SECONDS]

Started before the broker it measures, once it printed "polling", so Python's own start-up is outside the measured
time; then it polls every 5 ms over a plain socket (a refused connect or a 503 costs microseconds). Spawning curl or
Python for each poll, as the scripts' other waits do, takes tens of milliseconds of CPU each time from the two cores
the broker's loading threads use. Exits 1 when SECONDS (default 60) pass first.
"""
import socket
import sys
import time

port = int(sys.argv[1])
deadline = time.monotonic() + float(sys.argv[2] if len(sys.argv) > 2 else 60)
print("polling", flush=True)
request = b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
while time.monotonic() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(request)
            if s.recv(64).startswith(b"HTTP/1.1 200"):
                print(time.time_ns(), flush=True)
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.005)
sys.exit(1)
