#!/usr/bin/env python3
"""A second, independent audit chain verifier, written from docs/audit-chain.md alone.

Reads the JSON Lines of `redrive export-audit --format jsonl` (an export of the whole audit log,
no filter), rebuilds every entry's canonical form, recomputes hash = SHA-256(prev_hash ||
canonical) and checks the chain as `redrive verify-audit` does, printing the same lines:

    verify_audit_export.py EXPORT.jsonl [--head-id ID --head-hash HEX] [--start-hash HEX]

--start-hash checks an export that begins after the chain's first entry (one month's, before
`redrive audit-detach`): its first entry's prev_hash must be HEX, the head recorded at the end of
the month before (docs/audit-chain.md, "Detached months").

Exit 0 when the chain holds, 1 when it is broken, 64 on bad usage. Python 3 standard library only.
"""

import argparse
import hashlib
import json
import sys

# Keys in the order jsonb prints an object's keys: shorter first, then bytewise.
FIELDS = ("id", "at", "db_user", "client_addr", "os_user", "action", "targets", "reason",
          "ticket", "before", "after", "action_id", "outcome")
JSONB_FIELDS = {"targets", "before", "after", "outcome"}  # embedded as jsonb's own text
NUMBER_FIELDS = {"id"}
KEY_ORDER = sorted(FIELDS, key=lambda k: (len(k.encode()), k.encode()))


def escape_json(text):
    """PostgreSQL's escape_json: the JSON string for `text`, as UTF-8 bytes."""
    out = bytearray(b'"')
    for byte in text.encode("utf-8"):
        if byte == 0x22:
            out += b'\\"'
        elif byte == 0x5C:
            out += b"\\\\"
        elif byte == 0x08:
            out += b"\\b"
        elif byte == 0x0C:
            out += b"\\f"
        elif byte == 0x0A:
            out += b"\\n"
        elif byte == 0x0D:
            out += b"\\r"
        elif byte == 0x09:
            out += b"\\t"
        elif byte < 0x20:
            out += b"\\u%04x" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)


def skip_value(line, i):
    """The index just past the JSON value that starts at line[i] (bytes)."""
    c = line[i:i + 1]
    if c == b'"':
        i += 1
        while line[i:i + 1] != b'"':
            i += 2 if line[i:i + 1] == b"\\" else 1
        return i + 1
    if c in (b"{", b"["):
        depth = 0
        while True:
            c = line[i:i + 1]
            if c == b'"':
                i = skip_value(line, i)
                continue
            if c in (b"{", b"["):
                depth += 1
            elif c in (b"}", b"]"):
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
    while line[i:i + 1] not in (b",", b"}", b"]", b" ", b""):
        i += 1
    return i


def raw_members(line):
    """The top-level members of a JSON object line as {key: raw value bytes}, byte-exact."""
    members = {}
    i = 1  # past "{"
    while line[i:i + 1] != b"}":
        end = skip_value(line, i)
        key = json.loads(line[i:end])
        i = end + 1  # past ":"
        end = skip_value(line, i)
        members[key] = line[i:end]
        i = end
        if line[i:i + 1] == b",":
            i += 1
    return members


def canonical(members):
    """The canonical form of one entry (docs/audit-chain.md): jsonb_build_object(...)::text."""
    parts = []
    for key in KEY_ORDER:
        raw = members[key]
        if raw == b"null":
            value = b"null"
        elif key in JSONB_FIELDS or key in NUMBER_FIELDS:
            value = raw  # jsonb text (or a number) exactly as the server printed it
        else:
            value = escape_json(json.loads(raw))
        parts.append(escape_json(key) + b": " + value)
    return b"{" + b", ".join(parts) + b"}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export")
    parser.add_argument("--head-id", type=int)
    parser.add_argument("--head-hash")
    parser.add_argument("--start-hash")
    try:
        args = parser.parse_args()
    except SystemExit:
        return 64
    if (args.head_id is None) != (args.head_hash is None):
        print("verify_audit_export: give both --head-id and --head-hash", file=sys.stderr)
        return 64
    expected = bytes.fromhex(args.head_hash) if args.head_hash else None
    start = bytes.fromhex(args.start_hash) if args.start_hash else None

    problems = []  # (id, message, entries before it)
    checked = 0
    prev_id = None
    prev_hash = None
    head_reached = False
    with open(args.export, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            if not line:
                continue
            members = raw_members(line)
            if "chain_head" in members:
                continue  # the export's own head record, not an entry
            entry_id = int(members["id"])
            stored_prev = json.loads(members["prev_hash"])
            stored_prev = bytes.fromhex(stored_prev) if stored_prev is not None else None
            stored_hash = bytes.fromhex(json.loads(members["hash"]))
            recomputed = hashlib.sha256((stored_prev or b"") + canonical(members)).digest()
            if recomputed != stored_hash:
                problems.append((entry_id, "entry %d was changed: its hash does not match its "
                                 "contents" % entry_id, checked))
            elif prev_id is None and start is not None and stored_prev != start:
                problems.append((entry_id, "entry %d is the first entry but its prev_hash is not "
                                 "the start hash given" % entry_id, checked))
            elif prev_id is None and start is None and stored_prev is not None:
                problems.append((entry_id, "entry %d is the first entry but has a prev_hash: the "
                                 "entries before it were deleted" % entry_id, checked))
            elif prev_id is not None and stored_prev != prev_hash:
                problems.append((entry_id, "missing entries between id %d and id %d: the "
                                 "prev_hash of entry %d is not the hash of entry %d (entries "
                                 "were deleted)" % (prev_id, entry_id, entry_id, prev_id),
                                 checked))
            if args.head_id is not None and entry_id == args.head_id:
                head_reached = True
                if stored_hash != expected:
                    problems.append((entry_id, "entry %d: hash differs from the exported head"
                                     % entry_id, checked))
            prev_id, prev_hash = entry_id, stored_hash
            checked += 1
    if args.head_id is not None and not head_reached:
        problems.append((args.head_id, "the exported head %d was not reached: entries were "
                         "deleted (tail cut)" % args.head_id, checked))

    if prev_id is not None:
        print("chain head: id %d hash %s (%d entries)" % (prev_id, prev_hash.hex(), checked))
    else:
        print("chain head: none (the audit log is empty)")
    if problems:
        first = problems[0]
        print("BROKEN at entry %d: %s (%d entries verified before it)" % first)
        for entry_id, message, _ in problems[1:]:
            print("also broken at entry %d: %s" % (entry_id, message))
        return 1
    print("audit chain OK: %d entries verified in the client%s"
          % (checked, ", and it matches the exported head" if expected else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
