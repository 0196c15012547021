"""``torch.nn.utils.rnn``: ``pad_sequence``; packed sequences are not supported.

    >>> padded = pad_sequence([gradwalk.ones(3, 2), gradwalk.ones(1, 2)])   # (3, 2, 2), time first

gradwalk's recurrent layers take padded tensors only: ``PackedSequence`` and the functions that
make or read one raise a ``NotImplementedError`` that names them.
"""


def _not_supported(name):
    raise NotImplementedError(
        f"torch.nn.utils.rnn.{name}: PackedSequence is not supported by gradwalk; its RNN, LSTM and "
        "GRU take padded tensors (torch.nn.utils.rnn.pad_sequence makes one)")


class PackedSequence:
    def __init__(self, *args, **kwargs):
        _not_supported("PackedSequence")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    _not_supported("pack_padded_sequence")


def pack_sequence(sequences, enforce_sorted=True):
    _not_supported("pack_sequence")


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    _not_supported("pad_packed_sequence")


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths (``L_i x *``) into ``L_max x B x *`` (or
    ``B x L_max x *``), each padded with ``padding_value`` on ``padding_side``."""
    from ...ops.shape import cat, stack
    from ...tensor import Tensor

    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    longest = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.size(0)
        if missing:
            fill = s.new_full((missing,) + tuple(s.shape[1:]), padding_value)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)
