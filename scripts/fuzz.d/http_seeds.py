#!/usr/bin/env python3
"""Writes the FuzzHTTP seed corpus: the raw requests of the reliability
catalogue's items 1-20 (shared/reference/http-reliability-security.md), plus
ordinary broker requests and pipelined sequences, one file per case.

Usage: http_seeds.py OUTDIR
"""
import hashlib
import os
import sys

H = b"Host: broker.example\r\n"


def get(target=b"/", extra=b"", version=b"HTTP/1.1", host=H):
    return b"GET " + target + b" " + version + b"\r\n" + host + extra + b"\r\n"


def post(extra, body=b"", target=b"/submit"):
    return b"POST " + target + b" HTTP/1.1\r\n" + H + extra + b"\r\n" + body


def chunked(body):
    return post(b"Transfer-Encoding: chunked\r\n", body)


CASES = {
    # Ordinary traffic the broker serves.
    "healthz": get(b"/healthz"),
    "metrics": get(b"/metrics", b"Accept: text/plain\r\nUser-Agent: prometheus\r\n"),
    "authorize": get(b"/authorize?provider=github&return_to=%2Fdone", b"Cookie: tb_flow=abc.def\r\n"),
    "callback": get(b"/callback?code=SplxlOBeZQQYbYS6WxSbIA&state=af0ifjsldkj"),
    "account": get(b"/account?id=github:42", b"Authorization: Bearer k\r\nConnection: keep-alive\r\n"),
    "delete": b"DELETE /account?id=github:42 HTTP/1.1\r\n" + H + b"Content-Length: 0\r\n\r\n",
    "form-post": post(b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 27\r\n",
                      b"provider=github&scope=a%20b"),
    "json-post": post(b"Content-Type: application/json\r\nContent-Length: 19\r\n", b'{"provider":"tmdb"}'),
    "head": b"HEAD /healthz HTTP/1.1\r\n" + H + b"\r\n",
    "options-star": b"OPTIONS * HTTP/1.1\r\n" + H + b"\r\n",
    "absolute-form": get(b"http://broker.example:8080/readyz?x=1"),
    "ipv6-host": get(b"/", host=b"Host: [::1]:8080\r\n"),
    "close": get(b"/", b"Connection: close\r\n"),
    # 1. Host required on 1.1, optional on 1.0.
    "01-no-host-11": b"GET / HTTP/1.1\r\n\r\n",
    "01-no-host-10": b"GET / HTTP/1.0\r\n\r\n",
    "01-10-keepalive": b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + get(b"/second"),
    # 2. Host variants.
    "02-two-hosts": get(b"/", H),
    "02-two-hosts-differ": get(b"/", b"Host: other.example\r\n"),
    "02-host-userinfo": get(b"/", host=b"Host: a@b\r\n"),
    "02-host-slash": get(b"/", host=b"Host: a/b\r\n"),
    "02-host-list": get(b"/", host=b"Host: a, b\r\n"),
    # 3. Whitespace before the colon.
    "03-space-colon-host": b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
    "03-space-colon-te": post(b"Transfer-Encoding : chunked\r\n", b"0\r\n\r\n"),
    # 4. Folding and leading whitespace.
    "04-obs-fold": get(b"/", b"X-A: one\r\n two\r\n"),
    "04-leading-space": b"GET / HTTP/1.1\r\n Host: x\r\n\r\n",
    # 5. Control bytes and non-ASCII.
    "05-bare-cr-value": get(b"/", b"X-A: a\rb\r\n"),
    "05-nul-value": get(b"/", b"X-A: a\x00b\r\n"),
    "05-non-ascii-name": get(b"/", b"X-\xc3\xa9: a\r\n"),
    "05-obs-text-value": get(b"/", b"X-A: caf\xc3\xa9\r\n"),
    "05-ctl-value": get(b"/", b"X-A: a\x01b\r\n"),
    "05-bare-cr-line": b"GET / HTTP/1.1\r" + H + b"\r\n",
    # 6. Bare LF.
    "06-bare-lf-head": b"GET / HTTP/1.1\nHost: x\n\n",
    "06-bare-lf-chunk": chunked(b"5\nhello\r\n0\r\n\r\n"),
    "06-bare-lf-trailer": chunked(b"0\r\nX: y\n\r\n"),
    # 7. CL with TE, and a smuggled request behind it.
    "07-cl-te-smuggle": post(b"Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\n" + get(b"/smuggled")),
    "07-te-cl": post(b"Transfer-Encoding: chunked\r\nContent-Length: 6\r\n", b"0\r\n\r\nX"),
    # 8. Bad Content-Length.
    "08-cl-two-differ": post(b"Content-Length: 1\r\nContent-Length: 2\r\n", b"ab"),
    "08-cl-two-same": post(b"Content-Length: 2\r\nContent-Length: 2\r\n", b"ab"),
    "08-cl-list": post(b"Content-Length: 1, 2\r\n", b"ab"),
    "08-cl-list-same": post(b"Content-Length: 5, 5\r\n", b"hello"),
    "08-cl-plus": post(b"Content-Length: +5\r\n", b"hello"),
    "08-cl-minus": post(b"Content-Length: -1\r\n"),
    "08-cl-hex": post(b"Content-Length: 0x5\r\n", b"hello"),
    "08-cl-space": post(b"Content-Length: 1 0\r\n", b"0123456789"),
    "08-cl-underscore": post(b"Content-Length: 1_0\r\n", b"0123456789"),
    "08-cl-empty": post(b"Content-Length: \r\n"),
    "08-cl-overflow": post(b"Content-Length: 99999999999999999999999\r\n"),
    "08-cl-19-digits": post(b"Content-Length: 0000000000000000005\r\n", b"hello"),
    # 9. Transfer codings.
    "09-te-gzip": post(b"Transfer-Encoding: gzip\r\n", b"x"),
    "09-te-xchunked": post(b"Transfer-Encoding: xchunked\r\n", b"0\r\n\r\n"),
    "09-te-chunked-gzip": post(b"Transfer-Encoding: chunked, gzip\r\n", b"0\r\n\r\n"),
    "09-te-gzip-chunked": post(b"Transfer-Encoding: gzip, chunked\r\n", b"0\r\n\r\n"),
    "09-te-trailing-space": post(b"Transfer-Encoding: chunked \r\n", b"0\r\n\r\n"),
    "09-te-upper": post(b"Transfer-Encoding: CHUNKED\r\n", b"0\r\n\r\n"),
    "09-te-vt": post(b"Transfer-Encoding: \x0bchunked\r\n", b"0\r\n\r\n"),
    "09-te-ff": post(b"Transfer-Encoding: chunked\x0c\r\n", b"0\r\n\r\n"),
    "09-te-nul": post(b"Transfer-Encoding: chun\x00ked\r\n", b"0\r\n\r\n"),
    "09-te-tab": post(b"Transfer-Encoding:\tchunked\r\n", b"0\r\n\r\n"),
    "09-te-twice": post(b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", b"0\r\n\r\n"),
    "09-te-empty": post(b"Transfer-Encoding: \r\n", b"0\r\n\r\n"),
    # 10. TE on HTTP/1.0.
    "10-te-http10": b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    # 11. Chunked bodies, accepted and rejected.
    "11-several-chunks": chunked(b"5\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\n\r\n"),
    "11-upper-hex": chunked(b"A\r\n0123456789\r\n0\r\n\r\n"),
    "11-000-end": chunked(b"3\r\nabc\r\n000\r\n\r\n"),
    "11-extension": chunked(b"5;a=b\r\nhello\r\n0\r\n\r\n"),
    "11-quoted-ext": chunked(b'5;a="b c;d"\r\nhello\r\n0\r\n\r\n'),
    "11-trailers": chunked(b"5\r\nhello\r\n0\r\nX-Checksum: 1\r\nX-More: 2\r\n\r\n"),
    "11-size-0x": chunked(b"0x5\r\nhello\r\n0\r\n\r\n"),
    "11-size-plus": chunked(b"+5\r\nhello\r\n0\r\n\r\n"),
    "11-size-lead-space": chunked(b" 5\r\nhello\r\n0\r\n\r\n"),
    "11-size-trail-space": chunked(b"5 \r\nhello\r\n0\r\n\r\n"),
    "11-empty-ext": chunked(b"2;\r\nhi\r\n0\r\n\r\n"),
    "11-ext-no-semicolon": chunked(b"2 ext\r\nhi\r\n0\r\n\r\n"),
    "11-missing-crlf": chunked(b"5\r\nhello0\r\n\r\n"),
    "11-too-long-data": chunked(b"5\r\nhello!!\r\n0\r\n\r\n"),
    "11-size-17-digits": chunked(b"00000000000000005\r\nhello\r\n0\r\n\r\n"),
    "11-size-negative": chunked(b"-5\r\nhello\r\n0\r\n\r\n"),
    "11-size-huge": chunked(b"ffffffffffffffff\r\nhello\r\n0\r\n\r\n"),
    # 12. Chunk-extension flood.
    "12-ext-flood": chunked(b"1;" + b"a" * 3000 + b"\r\nx\r\n0\r\n\r\n"),
    "12-many-small-ext": chunked(b"".join(b"1;e=" + b"v" * 200 + b"\r\nx\r\n" for _ in range(12)) + b"0\r\n\r\n"),
    # 13. Forbidden trailers (ignored, never merged).
    "13-trailer-cl": chunked(b"1\r\nx\r\n0\r\nContent-Length: 50\r\n\r\n"),
    "13-trailer-te": chunked(b"1\r\nx\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n"),
    "13-trailer-host": chunked(b"1\r\nx\r\n0\r\nHost: evil.example\r\n\r\n"),
    "13-trailer-auth": chunked(b"1\r\nx\r\n0\r\nAuthorization: Bearer x\r\n\r\n"),
    # 14. Target length (the fuzzer's inputs stop at 8 KiB; 414 comes from its tight limits).
    "14-long-target": get(b"/" + b"a" * 3000),
    "14-long-query": get(b"/q?" + b"k=v&" * 700),
    # 15. Header section size and count.
    "15-big-header": get(b"/", b"X-Big: " + b"b" * 6000 + b"\r\n"),
    "15-many-headers": get(b"/", b"".join(b"X-%d: v\r\n" % i for i in range(150))),
    # 16. Body limit.
    "16-cl-huge-no-body": post(b"Content-Length: 999999999\r\n"),
    "16-chunked-big": chunked(b"400\r\n" + b"z" * 1024 + b"\r\n400\r\n" + b"z" * 1024 + b"\r\n0\r\n\r\n"),
    # 17. Versions.
    "17-http10": b"GET / HTTP/1.0\r\n\r\n",
    "17-http12": get(b"/", version=b"HTTP/1.2"),
    "17-http20": get(b"/", version=b"HTTP/2.0"),
    "17-http30": get(b"/", version=b"HTTP/3.0"),
    "17-lowercase": get(b"/", version=b"http/1.1"),
    "17-1x": get(b"/", version=b"HTTP/1.x"),
    "17-01-1": get(b"/", version=b"HTTP/01.1"),
    "17-http09": b"GET /\r\n\r\n",
    "17-http09-no-host": b"GET / HTTP/0.9\r\n\r\n",
    # 18. Methods.
    "18-unknown-method": b"BREW /pot HTTP/1.1\r\n" + H + b"\r\n",
    "18-long-method": b"M" * 200 + b" / HTTP/1.1\r\n" + H + b"\r\n",
    "18-trace": b"TRACE / HTTP/1.1\r\n" + H + b"\r\n",
    "18-connect": b"CONNECT broker.example:443 HTTP/1.1\r\n" + H + b"\r\n",
    "18-lowercase-method": b"get / HTTP/1.1\r\n" + H + b"\r\n",
    # 19. Expect.
    "19-expect-continue": post(b"Expect: 100-continue\r\nContent-Length: 5\r\n", b"hello"),
    "19-expect-unknown": post(b"Expect: 200-ok\r\nContent-Length: 5\r\n", b"hello"),
    "19-expect-http10": b"POST / HTTP/1.0\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\nhi",
    # 20. Unread bodies and pipelining.
    "20-get-with-body-pipelined": get(b"/", b"Content-Length: 5\r\n") + b"hello" + get(b"/second"),
    "20-cl0-poison": post(b"Content-Length: 0\r\n") + b"GET /poison HTTP/1.1\r\n" + H + b"\r\n",
    "20-pipeline-three": get(b"/a") + post(b"Content-Length: 3\r\n", b"xyz") + chunked(b"2\r\nhi\r\n0\r\n\r\n"),
    "20-pipeline-then-close": get(b"/a", b"Connection: close\r\n") + get(b"/after-close"),
    "20-leading-crlf": b"\r\n\r\n" + get(b"/"),
    "20-partial-second": get(b"/a") + b"GET /b HTTP/1.1\r\nHo",
    "20-partial-body": post(b"Content-Length: 10\r\n", b"12345"),
}

# Answers for the response mode (ResponseFuzzCase): the first byte's low bit says whether the
# request was HEAD, so the request parser and h11 both refuse these at their first byte.
RESPONSES = {
    "r-length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    "r-chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
    "r-until-close": b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nthe rest",
    "r-interim": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
    "r-304-with-length": b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
    "r-cl-te": b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "r-gzip-te": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "r-obs-fold": b"HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nContent-Length: 0\r\n\r\n",
    "r-bad-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
    "r-no-reason": b"HTTP/1.1 404\r\nContent-Length: 1\r\n\r\nx",
    "r-switch": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in CASES.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    for name, data in RESPONSES.items():
        for prefix, kind in ((b"\x00", "get"), (b"\x01", "head")):
            with open(os.path.join(out, f"{name}-{kind}"), "wb") as f:
                f.write(prefix + data)
    print(f"http_seeds: {len(CASES)} request seeds and {2 * len(RESPONSES)} response seeds in {out}")


if __name__ == "__main__":
    main()
