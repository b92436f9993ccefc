"""Independent readers of the shard layouts, written from the formats' specifications (llm.c's
fineweb.py header, megatron-core's indexed_dataset.py, datatrove's TokenizedFile) with numpy
only: they share no code with toksmith.dataset."""

import numpy as np


def llmc(path):
    header = np.fromfile(path, dtype="<i4", count=256)
    assert header[0] == 20240520
    assert header[1] in (1, 2)
    dtype = "<u2" if header[1] == 1 else "<u4"
    ids = np.memmap(path, dtype=dtype, mode="r", offset=256 * 4)
    assert len(ids) == header[2]
    return header, np.asarray(ids)


MEGATRON_DTYPES = {8: "<u2", 4: "<i4"}


def megatron(prefix):
    """(dtype code, list of sequences, document indices) of a Megatron indexed dataset."""
    raw = np.fromfile(prefix + ".idx", dtype=np.uint8).tobytes()
    assert raw[:9] == b"MMIDIDX\x00\x00"
    assert int.from_bytes(raw[9:17], "little") == 1
    code = raw[17]
    n_seq = int.from_bytes(raw[18:26], "little")
    n_doc = int.from_bytes(raw[26:34], "little")
    off = 34
    lengths = np.frombuffer(raw, "<i4", n_seq, off)
    off += 4 * n_seq
    pointers = np.frombuffer(raw, "<i8", n_seq, off)
    off += 8 * n_seq
    doc_idx = np.frombuffer(raw, "<i8", n_doc, off)
    off += 8 * n_doc
    assert off == len(raw)
    data = np.fromfile(prefix + ".bin", dtype=np.uint8).tobytes()
    dtype = np.dtype(MEGATRON_DTYPES[code])
    seqs = [
        np.frombuffer(data, dtype, int(n), int(p)) if n else np.zeros(0, dtype)
        for n, p in zip(lengths, pointers)
    ]
    return code, seqs, doc_idx


def datatrove(path, token_size):
    ids = np.fromfile(path, dtype="<u2" if token_size == 2 else "<u4")
    ends = np.fromfile(path + ".index", dtype="<u8")
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
    return [ids[s:e] for s, e in zip(starts, ends.astype(np.int64))]


def npy(prefix):
    ids = np.load(prefix + ".ids.npy", mmap_mode="r")
    offsets = np.load(prefix + ".offsets.npy")
    assert offsets.dtype == np.int64 and offsets[0] == 0 and offsets[-1] == len(ids)
    return [np.asarray(ids[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1)]
