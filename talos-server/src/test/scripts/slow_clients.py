#!/usr/bin/env python3
"""Slow-client check against a running Talos server (e.g. `bin/talos server`).

Opens N connections that announce a 1 MiB putMessage body and trickle it one byte at a time
(half signed with only a key id and a garbage signature, half validly signed), then keeps making
legitimate calls (signed listTopics on the API port, GET /ops/health on the API and ops ports)
and reports the worst latency and what happened to the trickling connections.

  talos-server/src/test/scripts/slow_clients.py --credentials data/admin-credential.properties \
      [--api http://127.0.0.1:8080] [--ops http://127.0.0.1:8081] [--connections 100] [--seconds 20]

Exit status 1 when a legitimate call failed or took longer than --max-latency-ms (2000).
"""
import argparse, base64, hashlib, hmac, http.client, socket, sys, threading, time, urllib.parse


def props(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def list_topics_call():
    # Thrift compact: protocol id, version|CALL<<5, seqid 1, name, empty args struct (STOP).
    name = b"listTopics"
    return bytes([0x82, 0x21, 0x01, len(name)]) + name + b"\x00"


def signed_headers(key_id, secret, path, md5_hex, ts):
    headers = {"Content-Type": "application/x-thrift-compact", "X-Xiaomi-Timestamp": str(ts),
               "X-Xiaomi-Content-MD5": md5_hex}
    lines = ["POST", "", headers["Content-Type"], ""]
    for k in sorted(h.lower() for h in headers if h.lower().startswith("x-xiaomi-")):
        v = next(val for name, val in headers.items() if name.lower() == k)
        lines.append(k + ":" + v)
    to_sign = "\n".join(lines) + "\n" + path
    sig = base64.b64encode(hmac.new(secret.encode(), to_sign.encode(), hashlib.sha1).digest()).decode()
    headers["Authorization"] = "Galaxy-V3 %s:%s" % (key_id, sig)
    return headers


def trickler(api, key_id, secret, n, results, stop):
    path = "/v1/api/message"
    md5 = "%032x" % (0xabcdef00 + n)  # the body never completes; distinct per connection
    ts = int(time.time())
    if secret is not None:
        headers = signed_headers(key_id, secret, path, md5, ts)
    else:
        headers = {"Content-Type": "application/x-thrift-compact", "X-Xiaomi-Timestamp": str(ts),
                   "X-Xiaomi-Content-MD5": md5, "Authorization": "Galaxy-V3 %s:bm90IGEgc2lnbmF0dXJl" % key_id}
    req = "POST %s?id=slow%d&type=putMessage HTTP/1.1\r\nHost: %s:%d\r\n" % (path, n, api.hostname, api.port)
    req += "".join("%s: %s\r\n" % kv for kv in headers.items()) + "Content-Length: 1048576\r\n\r\n"
    s = socket.create_connection((api.hostname, api.port), timeout=5)
    s.sendall(req.encode())
    s.setblocking(False)
    start = time.time()
    answer = b""
    while not stop.is_set():
        try:
            s.send(b"x")
        except OSError:
            break
        try:
            data = s.recv(256)
            if not data:
                break
            answer += data
        except BlockingIOError:
            pass
        except OSError:
            break
        time.sleep(0.25)
    status = answer.split(b"\r\n", 1)[0].decode(errors="replace") if answer else "closed"
    results[n] = (status if not stop.is_set() or answer else "still open", time.time() - start)
    s.close()


def timed(fn):
    t0 = time.time()
    ok = fn()
    return ok, (time.time() - t0) * 1000


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--api", default="http://127.0.0.1:8080")
    p.add_argument("--ops", default="http://127.0.0.1:8081")
    p.add_argument("--credentials", required=True, help="admin-credential.properties (secretKeyId, secretKey)")
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--max-latency-ms", type=float, default=2000)
    a = p.parse_args()
    cred = props(a.credentials)
    key_id, secret = cred["secretKeyId"], cred["secretKey"]
    api, ops = urllib.parse.urlparse(a.api), urllib.parse.urlparse(a.ops)

    stop = threading.Event()
    results = {}
    threads = [threading.Thread(target=trickler, args=(api, key_id, secret if i % 2 else None, i, results, stop),
                                daemon=True) for i in range(a.connections)]
    for t in threads:
        t.start()
    time.sleep(0.5)

    def list_topics():
        body = list_topics_call()
        path = "/v1/api/topic"
        headers = signed_headers(key_id, secret, path, hashlib.md5(body).hexdigest(), int(time.time()))
        c = http.client.HTTPConnection(api.hostname, api.port, timeout=30)
        c.request("POST", path + "?id=legit&type=listTopics", body, headers)
        r = c.getresponse()
        r.read()
        c.close()
        return r.status == 200

    def health(url):
        def call():
            c = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
            c.request("GET", "/ops/health")
            r = c.getresponse()
            r.read()
            c.close()
            return r.status == 200
        return call

    worst, calls, failures = {}, 0, 0
    until = time.time() + a.seconds
    while time.time() < until:
        for name, fn in (("listTopics", list_topics), ("health(api port)", health(api)), ("health(ops port)", health(ops))):
            try:
                ok, ms = timed(fn)
            except Exception as e:  # timeouts, resets
                ok, ms = False, float("inf")
                print("%s failed: %s" % (name, e), file=sys.stderr)
            calls += 1
            failures += 0 if ok else 1
            worst[name] = max(worst.get(name, 0), ms)
        time.sleep(0.05)
    open_now = sum(1 for t in threads if t.is_alive())
    stop.set()
    for t in threads:
        t.join(5)
    outcomes = {}
    for status, _ in results.values():
        outcomes[status] = outcomes.get(status, 0) + 1
    print("legitimate calls: %d, failed: %d" % (calls, failures))
    for name, ms in worst.items():
        print("  worst %-18s %8.1f ms" % (name, ms))
    print("trickling connections: %d, still open after %.0f s: %d" % (a.connections, a.seconds, open_now))
    for status, count in sorted(outcomes.items()):
        print("  %4d  %s" % (count, status))
    worst_all = max(worst.values()) if worst else float("inf")
    sys.exit(0 if failures == 0 and worst_all < a.max_latency_ms else 1)


if __name__ == "__main__":
    main()
