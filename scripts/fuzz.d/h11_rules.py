"""The known, deliberate differences between token-broker's request parser and h11.

Each rule names a difference, says why it is deliberate, and checks on the raw
bytes of the request in question (`seg`: from the first byte of that request to
the end of the input) that the difference really applies. A rule that matches
our parser's message but whose predicate fails does not excuse anything: the
difference then counts as a disagreement.
"""
import re

KNOWN_METHODS = {b"GET", b"HEAD", b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"CONNECT"}
CTL_IN_VALUE = re.compile(rb"[\x01-\x08\x0e-\x1f\x7f]")
# Our Host grammar (RFC 9112 §3.2, RFC 3986 §3.2.2): reg-name without "," or IPv6 literal, optional 1-5 digit port.
# An IP literal holds hex digits, "." and at least two ":" (IPvFuture is not accepted).
HOST = re.compile(rb"(?:(?:[A-Za-z0-9\-._~!$&'()*+;=]|%[0-9A-Fa-f]{2})+|\[[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*\])(?::[0-9]{1,5})?")
TARGET_ABSOLUTE = re.compile(rb"(?i:https?)://(?:[A-Za-z0-9\-._~!$&'()*+;=]|%[0-9A-Fa-f]{2})+(?::[0-9]{1,5})?(?:[/?].*)?|"
                             rb"(?i:https?)://\[[0-9A-Fa-f:.]*\](?::[0-9]{1,5})?(?:[/?].*)?")


def head_of(seg):
    """The head of the request (leading CRLFs skipped), up to the blank line or the end of the input."""
    body = seg.lstrip(b"\r\n")
    match = re.search(rb"\r?\n\r?\n", body)
    return body[:match.start()] if match else body


def lines(head):
    return [line[:-1] if line.endswith(b"\r") else line for line in head.split(b"\n")]


def request_line(seg):
    return lines(head_of(seg))[0]


def fields(seg):
    """(lowercase name, value) of each field line that has a colon; folded lines stay separate."""
    out = []
    for line in lines(head_of(seg))[1:]:
        name, colon, value = line.partition(b":")
        if colon:
            out.append((name.strip().lower(), value.strip(b" \t")))
    return out


def chunk_sizes(seg):
    """The hex digits that begin each line after the head (chunk-size candidates)."""
    return re.findall(rb"(?:^|\n)([0-9A-Fa-f]+)", chunked_area(seg))


def has_framing_trailer(seg):
    """Whether a line after the head names Content-Length or Transfer-Encoding (a trailer field)."""
    return re.search(rb"(?im)^(?:content-length|transfer-encoding)[ \t]*:", chunked_area(seg)) is not None


# Our chunk-size line (RFC 9112 §7.1, §7.1.1): 1-16 HEXDIG, then extensions BWS ";" BWS name [BWS "=" BWS value].
_TOKEN = rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+"
_QUOTED = rb'"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"'
OUR_SIZE_LINE = re.compile(rb"[0-9A-Fa-f]{1,16}(?:[ \t]*;[ \t]*" + _TOKEN + rb"(?:[ \t]*=[ \t]*(?:" + _TOKEN + rb"|" + _QUOTED + rb"))?)*")
# h11's chunk header (h11/_abnf.py chunk_header): 1-20 HEXDIG, ";" and anything, trailing OWS.
H11_SIZE_LINE = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;.*)?[ \t]*", re.S)


def first_size_line_only_h11_takes(seg):
    """Walks the chunked body as h11 frames it; whether a size line h11 accepts breaks our grammar."""
    area = chunked_area(seg)
    pos = 0
    while True:
        end = area.find(b"\r\n", pos)
        if end < 0:
            return False
        line = area[pos:end]
        theirs = H11_SIZE_LINE.fullmatch(line)
        if theirs is None:
            return False
        if OUR_SIZE_LINE.fullmatch(line) is None:
            return True
        size = int(theirs.group(1), 16)
        if size == 0:
            return False
        pos = end + 2 + size + 2


def version(seg):
    parts = request_line(seg).split(b" ")
    return parts[2] if len(parts) == 3 else b""


def chunked_area(seg):
    """The bytes after the head: where chunk lines and trailers are."""
    body = seg.lstrip(b"\r\n")
    match = re.search(rb"\r?\n\r?\n", body)
    return body[match.end():] if match else b""


# Ours rejects, h11 accepts. Keyed by our error message; each predicate confirms the cause on the bytes.
OURS_STRICTER = [
    # Catalogue item 6 / RFC 9112 §2.2: bare LF line ends are refused (h11 accepts them in heads and trailers).
    ("bare-lf", "Lines must end with CRLF", lambda seg, o: re.search(rb"(?<!\r)\n", seg) is not None),
    ("bare-lf", "The request line must end with CRLF", lambda seg, o: re.search(rb"(?<!\r)\n", seg) is not None),
    # Catalogue item 18 / RFC 9112 §3: methods the server does not implement get 501.
    ("unknown-method", "The request method is not implemented",
     lambda seg, o: request_line(seg).split(b" ")[0] not in KNOWN_METHODS),
    # Catalogue item 17 / RFC 9112 §2.3: only HTTP/1.x is served (h11 accepts HTTP/2.0, HTTP/0.9).
    ("version-not-1", "Only HTTP/1.0 and HTTP/1.1", lambda seg, o: re.fullmatch(rb"HTTP/[02-9]\.[0-9]", version(seg)) is not None),
    # RFC 9112 §3.2: origin-form, absolute http(s) URI, or "*" for OPTIONS; h11 takes any visible ASCII.
    ("target-form", "The request target must be origin-form",
     lambda seg, o: not request_line(seg).split(b" ")[1].startswith(b"/")
     and TARGET_ABSOLUTE.fullmatch(request_line(seg).split(b" ")[1]) is None),
    ("target-form", "The asterisk request target is only valid for OPTIONS",
     lambda seg, o: request_line(seg).split(b" ")[:2] != [b"OPTIONS", b"*"]),
    # Catalogue item 4 / RFC 9112 §5.2: obs-fold is refused, not unfolded as h11 does.
    ("obs-fold", "Folded header lines are not accepted", lambda seg, o: any(
        line[:1] in (b" ", b"\t") for line in lines(head_of(seg))[1:])),
    # RFC 9110 §5.5: control bytes in a field value; h11 allows them (h11 issue 57).
    ("control-in-value", "A header field value contains a control byte",
     lambda seg, o: any(CTL_IN_VALUE.search(v) for _, v in fields(seg))),
    # Catalogue item 2 / RFC 9112 §3.2: an invalid Host value is 400; h11 only counts Host fields.
    ("host-value", "The Host header field is invalid",
     lambda seg, o: any(n == b"host" and HOST.fullmatch(v) is None for n, v in fields(seg))),
    # Catalogue item 1: Host is required on HTTP/1.1 and the 1.x versions served as 1.1; h11 checks exactly "1.1".
    ("host-required-1x", "An HTTP/1.1 request must have a Host",
     lambda seg, o: version(seg) not in (b"HTTP/1.1", b"HTTP/1.0") and not any(n == b"host" for n, _ in fields(seg))),
    # Catalogue item 8 / RFC 9110 §8.6: repeated or listed Content-Length is refused; h11 collapses equal values.
    ("content-length-repeat", "More than one Content-Length",
     lambda seg, o: sum(n == b"content-length" for n, _ in fields(seg)) > 1),
    ("content-length-syntax", "The Content-Length header field is invalid",
     lambda seg, o: any(n == b"content-length" and (b"," in v or len(v) > 18) for n, v in fields(seg))),
    # Catalogue item 7 / RFC 9112 §6.1: Content-Length with Transfer-Encoding is refused; h11 lets TE win.
    ("cl-with-te", "Content-Length and Transfer-Encoding must not both be sent",
     lambda seg, o: {b"content-length", b"transfer-encoding"} <= {n for n, _ in fields(seg)}),
    # Catalogue item 10 / RFC 9112 §6.1: Transfer-Encoding on HTTP/1.0 is faulty framing.
    ("te-on-http10", "Transfer-Encoding is not allowed in an HTTP/1.0",
     lambda seg, o: version(seg) == b"HTTP/1.0" and any(n == b"transfer-encoding" for n, _ in fields(seg))),
    # Catalogue item 19 / RFC 9110 §10.1.1: an unknown expectation is 417; h11 ignores Expect.
    ("expectation", "Only the 100-continue expectation",
     lambda seg, o: any(n == b"expect" and v.lower() != b"100-continue" for n, v in fields(seg))),
    # Catalogue item 16: an announced body over 1 MiB is 413 before reading; h11 waits for it.
    ("body-over-limit", "The request body is too large", lambda seg, o: any(
        n == b"content-length" and v.isdigit() and int(v) > 1 << 20 for n, v in fields(seg))
     or sum(int(size, 16) for size in chunk_sizes(seg)) > 1 << 20),
    # Catalogue item 11 / RFC 9112 §7.1: at most 16 hex digits and below 2^63 (h11 allows 20 digits and waits for the data).
    ("chunk-size-overflow", "The chunk size is too large",
     lambda seg, o: any(len(size) > 16 or int(size, 16) >= 1 << 63 for size in chunk_sizes(seg))),
    # Catalogue items 14-15: a target over 8 KiB is 414, a header section over 32 KiB or 100 fields is 431.
    ("target-over-limit", "The request target is too long",
     lambda seg, o: len(request_line(seg).split(b" ")[1] if b" " in request_line(seg) else request_line(seg)) > 8192),
    ("header-section-over-limit", "The request header section is too large",
     lambda seg, o: len(lines(head_of(seg))) - 1 > 100 or len(head_of(seg)) > 32768),
    # Catalogue item 11 / RFC 9112 §7.1.1: chunk-ext grammar (h11 takes ";" and anything, and trailing BWS).
    ("chunk-ext-grammar", "A chunk-size line is malformed", lambda seg, o: first_size_line_only_h11_takes(seg)),
    # RFC 9112 §7.1.2: trailers are field lines with CRLF; h11 unfolds and takes bare LF and control bytes.
    ("trailer-grammar", "A trailer field is malformed",
     lambda seg, o: re.search(rb"(?<!\r)\n|\n[ \t]|[\x01-\x08\x0e-\x1f\x7f]", chunked_area(seg)) is not None),
]

# A chunk-size line with optional whitespace before ";" or around "=" in an extension.
CHUNK_EXT_BWS = re.compile(rb"(?m)^[0-9A-Fa-f]+(?:[ \t]+;|[^\r\n]*;[ \t]|[^\r\n]*;[^\r\n=]*[ \t]=|[^\r\n]*;[^\r\n]*=[ \t])")

# h11 rejects, ours accepts. Keyed by h11's message.
H11_STRICTER = [
    # RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line; h11 refuses any.
    ("leading-empty-line", "no request line received", lambda seg, t: seg.startswith(b"\r\n")),
    ("leading-empty-line", "illegal request line", lambda seg, t: seg.startswith(b"\r")),
    # RFC 9112 §7.1.2: trailers are discarded here, never merged; h11 validates Content-Length and
    # Transfer-Encoding trailer fields as if they were header fields.
    ("framing-field-in-trailer", "Only Transfer-Encoding: chunked is supported", lambda seg, t: has_framing_trailer(seg)),
    ("framing-field-in-trailer", "multiple Transfer-Encoding headers", lambda seg, t: has_framing_trailer(seg)),
    ("framing-field-in-trailer", "bad Content-Length", lambda seg, t: has_framing_trailer(seg)),
    ("framing-field-in-trailer", "conflicting Content-Length headers", lambda seg, t: has_framing_trailer(seg)),
    # RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS value ] ); h11 refuses the BWS.
    ("chunk-ext-bws", "illegal chunk header", lambda seg, t: CHUNK_EXT_BWS.search(chunked_area(seg)) is not None),
    # RFC 9110 §5.6.1.2: empty list elements in Transfer-Encoding are ignored; h11 compares the whole value to "chunked".
    ("te-list-elements", "Only Transfer-Encoding: chunked is supported", lambda seg, t: any(
        n == b"transfer-encoding" and b"," in v and v.replace(b",", b"").strip(b" \t").lower() == b"chunked"
        for n, v in fields(seg))),
]


def classify_ours_stricter(seg, ours):
    """The rule that explains our rejection of the request at the start of `seg`, or None."""
    for rule, message, holds in OURS_STRICTER:
        if ours.get("message", "").startswith(message) and holds(seg, ours):
            return rule
    return None


def classify_h11_stricter(seg, theirs):
    """The rule that explains h11's rejection of the request at the start of `seg`, or None."""
    for rule, message, holds in H11_STRICTER:
        if theirs.get("message", "").startswith(message) and holds(seg, theirs):
            return rule
    return None
