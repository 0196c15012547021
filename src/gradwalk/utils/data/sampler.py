"""Samplers: the order in which a ``DataLoader`` visits a dataset's indices."""
import numpy as np

from ... import _distributions
from ...random import Generator, _resolve


class Sampler:
    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh permutation every epoch, drawn from ``generator`` (or, like PyTorch, from a new
    generator seeded by one draw from the default one). Lazy, as PyTorch's: nothing is drawn
    until the first index is asked for, and with replacement the indices come 32 at a time."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:  # torch.empty((), dtype=torch.int64).random_(): a random64 % 2**63
            seed = int(_distributions.random_default(_resolve(None), 1, np.int64)[0])
            generator = Generator().manual_seed(seed)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _distributions.random_from_to(generator, 32, np.int64, 0, n).tolist()
            yield from _distributions.random_from_to(generator, self.num_samples % 32, np.int64, 0, n).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _distributions.randperm(generator, n).tolist()
            yield from _distributions.randperm(generator, n).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
