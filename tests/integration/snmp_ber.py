"""Just enough BER (X.690) for the integration tests to build SNMP messages by hand and take answers
apart, independently of fleetsim's codec and of net-snmp: lengths, TLVs, INTEGER, OBJECT IDENTIFIER and a
tree decoder."""


def ber_len(n):
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def tlv(tag, body):
    return bytes([tag]) + ber_len(len(body)) + body


def ber_int(v):
    return tlv(0x02, v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True))


def ber_oid(text):
    parts = [int(p) for p in text.split(".")]
    body = bytes([parts[0] * 40 + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7f]
        p >>= 7
        while p:
            chunk.insert(0, 0x80 | (p & 0x7f))
            p >>= 7
        body += bytes(chunk)
    return tlv(0x06, body)


def oid_text(body):
    parts = [body[0] // 40, body[0] % 40]
    v = 0
    for b in body[1:]:
        v = (v << 7) | (b & 0x7f)
        if not b & 0x80:
            parts.append(v)
            v = 0
    return ".".join(str(p) for p in parts)


def read_tlv(data, pos):
    """(tag, start of the value, end of the value) of the TLV at @pos."""
    tag, n = data[pos], data[pos + 1]
    pos += 2
    if n & 0x80:
        k = n & 0x7f
        n = int.from_bytes(data[pos:pos + k], "big")
        pos += k
    return tag, pos, pos + n


def decode(data):
    """A BER tree: [(tag, bytes or list of children)]; constructed tags are 0x30 and the PDU tags."""
    out = []
    pos = 0
    while pos < len(data):
        tag, start, end = read_tlv(data, pos)
        body = data[start:end]
        pos = end
        out.append((tag, decode(body) if tag == 0x30 or 0xa0 <= tag <= 0xa8 else body))
    return out


def v2c_request(pdu_type, request_id, oids, community=b"public", a=0, b=0):
    """An SNMPv2c request for @oids with NULL values; @a and @b are non-repeaters and max-repetitions of a
    GETBULK, zero otherwise."""
    binds = b"".join(tlv(0x30, ber_oid(o) + b"\x05\x00") for o in oids)
    pdu = tlv(pdu_type, ber_int(request_id) + ber_int(a) + ber_int(b) + tlv(0x30, binds))
    return tlv(0x30, ber_int(1) + tlv(0x04, community) + pdu)


def v2c_response(data):
    """(request-id, error-status, error-index, [value bytes of each varbind]) of a v1/v2c Response;
    raises AssertionError on anything else."""
    _, p, _ = read_tlv(data, 0)
    _, _, p = read_tlv(data, p)  # version
    _, _, p = read_tlv(data, p)  # community
    tag, p, _ = read_tlv(data, p)
    if tag != 0xa2:
        raise AssertionError("not a response: tag %#x" % tag)
    fields = []
    for _ in range(3):
        _, s, e = read_tlv(data, p)
        fields.append(int.from_bytes(data[s:e], "big", signed=True))
        p = e
    _, p, end = read_tlv(data, p)
    values = []
    while p < end:
        _, bind, p = read_tlv(data, p)
        _, _, v = read_tlv(data, bind)  # name
        _, vs, ve = read_tlv(data, v)
        values.append(data[vs:ve])
    return fields[0], fields[1], fields[2], values
