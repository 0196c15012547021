"""utils.data beside PyTorch's: the same batches in order, the same sizes with drop_last, the
same collation; shuffling that a generator makes reproducible."""
import numpy as np
import pytest
import torch

import gradwalk
from gradwalk.utils.data import DataLoader, Dataset, TensorDataset, random_split


def test_sequential_batches_match_torch():
    x, y = np.arange(20.0, dtype=np.float32).reshape(10, 2), np.arange(10)
    for drop_last in (False, True):
        ours = list(DataLoader(TensorDataset(gradwalk.tensor(x), gradwalk.tensor(y)), batch_size=4,
                               drop_last=drop_last))
        theirs = list(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)),
                                                  batch_size=4, drop_last=drop_last))
        assert len(ours) == len(theirs) == (2 if drop_last else 3)
        for (xb, yb), (xt, yt) in zip(ours, theirs):
            assert isinstance(xb, gradwalk.Tensor) and xb.dtype is gradwalk.float32 and yb.dtype is gradwalk.int64
            np.testing.assert_array_equal(xb._data, xt.numpy())
            np.testing.assert_array_equal(yb._data, yt.numpy())


def test_shuffle_with_a_generator_is_reproducible_and_a_permutation():
    ds = TensorDataset(gradwalk.arange(50))

    def epoch(seed):
        loader = DataLoader(ds, batch_size=8, shuffle=True, generator=gradwalk.Generator().manual_seed(seed))
        return np.concatenate([b._data for (b,) in loader])

    assert np.array_equal(epoch(3), epoch(3))
    assert not np.array_equal(epoch(3), epoch(4))
    assert sorted(epoch(3).tolist()) == list(range(50))
    loader = DataLoader(ds, batch_size=50, shuffle=True, generator=gradwalk.Generator().manual_seed(0))
    first, second = [b._data.tolist() for (b,) in loader], [b._data.tolist() for (b,) in loader]
    assert first != second  # a new order each epoch


class Pairs(Dataset):
    """A map-style dataset of (array, number, dict) samples."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return np.full(3, i, dtype=np.float32), i, {"square": float(i * i)}


def test_default_collate_matches_torch_on_mixed_samples():
    ours = next(iter(DataLoader(Pairs(), batch_size=3)))
    theirs = next(iter(torch.utils.data.DataLoader(Pairs(), batch_size=3)))
    assert isinstance(ours, list) and len(ours) == 3
    np.testing.assert_array_equal(ours[0]._data, theirs[0].numpy())
    assert ours[1].dtype is gradwalk.int64 and ours[1].tolist() == theirs[1].tolist()
    assert ours[2]["square"].dtype is gradwalk.float64 and ours[2]["square"].tolist() == theirs[2]["square"].tolist()


def test_lengths_and_size_mismatch():
    ds = TensorDataset(gradwalk.zeros(7, 2), gradwalk.zeros(7))
    assert len(ds) == 7 and len(DataLoader(ds, batch_size=3)) == 3
    assert len(DataLoader(ds, batch_size=3, drop_last=True)) == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(gradwalk.zeros(3), gradwalk.zeros(4))


def test_random_split_partitions_the_dataset():
    parts = random_split(TensorDataset(gradwalk.arange(10)), [7, 3], generator=gradwalk.Generator().manual_seed(1))
    seen = sorted(int(parts[i][j][0]) for i in range(2) for j in range(len(parts[i])))
    assert [len(p) for p in parts] == [7, 3] and seen == list(range(10))


def test_bad_batch_size_message_matches_torch():
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(list(range(3)), batch_size=0)
    with pytest.raises(ValueError) as ours:
        DataLoader(list(range(3)), batch_size=0)
    assert str(ours.value) == str(theirs.value)
