"""LineCutter: every byte goes on exactly once, and no line's end goes on before the line is recorded."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpreel.record.framing import LineCutter


def run(chunks: list[bytes], batch: int = 64) -> tuple[bytes, list[bytes], list[tuple[int, int]], bytes | None]:
    """Feed ``chunks``; returns (bytes sent on, lines recorded, (lines recorded so far, bytes sent so far) log, rest)."""
    cutter = LineCutter(batch)
    sent = bytearray()
    recorded: list[bytes] = []
    log: list[tuple[int, int]] = []
    for chunk in chunks:
        start = 0
        for lines, end in cutter.feed(chunk):
            assert 0 < len(lines) <= batch
            recorded.extend(lines)
            sent += chunk[start:end]
            start = end
            log.append((len(recorded), len(sent)))
        sent += chunk[start:]
        log.append((len(recorded), len(sent)))
    rest = cutter.finish()
    return bytes(sent), recorded, log, rest


def cut(data: bytes, points: list[int]) -> list[bytes]:
    points = sorted({p for p in points if 0 < p < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def test_one_chunk_of_whole_lines():
    sent, recorded, _, rest = run([b'{"a":1}\n{"b":2}\n'])
    assert sent == b'{"a":1}\n{"b":2}\n'
    assert recorded == [b'{"a":1}', b'{"b":2}']
    assert rest is None


def test_a_line_across_chunks_is_recorded_once_whole():
    sent, recorded, _, rest = run([b'{"a":', b"1}", b'\n{"b"', b":2}\n"])
    assert recorded == [b'{"a":1}', b'{"b":2}']
    assert sent == b'{"a":1}\n{"b":2}\n'
    assert rest is None


def test_last_line_without_newline_is_left_for_finish():
    sent, recorded, _, rest = run([b"x\ny"])
    assert recorded == [b"x"]
    assert sent == b"x\ny"
    assert rest == b"y"


def test_empty_lines_and_crlf_are_lines_too():
    _, recorded, _, _ = run([b"\n\r\n{}\r\n"])
    assert recorded == [b"", b"\r", b"{}\r"]


def test_a_burst_is_cut_in_batches_that_go_on_one_after_another():
    data = b"".join(b"%d\n" % i for i in range(10))
    cutter = LineCutter(batch=4)
    steps = cutter.feed(data)
    assert [len(lines) for lines, _ in steps] == [4, 4, 2]
    assert [end for _, end in steps] == [8, 16, 20]


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    tail=st.binary(max_size=10).map(lambda b: b.replace(b"\n", b"")),
    points=st.lists(st.integers(min_value=0, max_value=2000), max_size=12),
    batch=st.integers(min_value=1, max_value=8),
)
def test_property_bytes_pass_unchanged_and_lines_are_recorded_before_their_newline_goes_on(lines, tail, points, batch):
    data = b"".join(line + b"\n" for line in lines) + tail
    sent, recorded, log, rest = run(cut(data, points) or [b""], batch)
    assert sent == data
    assert recorded == lines
    assert rest == (tail or None)
    # at every point, the newlines sent on are at most the lines recorded
    for n_recorded, n_sent in log:
        assert data[:n_sent].count(b"\n") <= n_recorded
