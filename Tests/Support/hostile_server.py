"""A hostile sync server for the sync tests: it answers every request the way its mode says.

    python3 hostile_server.py PORT_FILE MODE [SECONDS]

Modes:
    silent    accepts the connection and reads the request, then never answers
    trickle   answers 200 with a Content-Length of 1,000 and sends one byte every SECONDS
              (default 5): each read is quick, the answer never ends
    endless   answers 200 without a length and sends zeros as fast as it can, for ever
    huge      answers 200 with a Content-Length of 3 GiB and sends zeros as fast as it can
The port it listens on is written to PORT_FILE."""
import socket, sys, threading, time

mode = sys.argv[2]
pause = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return True


def serve(conn):
    try:
        if not read_request(conn):
            return
        if mode == "silent":
            while conn.recv(65536):
                pass
            return
        if mode == "trickle":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\n")
            for _ in range(1000):
                time.sleep(pause)
                conn.sendall(b"x")
            return
        zeros = b"\0" * (1 << 20)
        if mode == "endless":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n")
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % (3 << 30))
        while True:
            conn.sendall(zeros)
    except OSError:
        pass
    finally:
        conn.close()


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with open(sys.argv[1], "w") as f:
    f.write(str(listener.getsockname()[1]) + "\n")
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
