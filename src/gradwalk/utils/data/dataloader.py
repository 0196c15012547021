"""``DataLoader``: batches of a dataset, in order or shuffled, collated into tensors."""
import collections.abc
import numbers

import numpy as np

from ...tensor import Tensor
from .dataset import TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def default_collate(batch):
    """Stack samples into a batch: tensors and arrays stack along a new first dimension, numbers
    become a tensor, and tuples, lists and dicts are collated field by field."""
    from ...ops.shape import stack

    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch), 0)
    if isinstance(first, np.ndarray):
        return Tensor._make(np.stack(batch))
    if isinstance(first, bool):
        return Tensor._make(np.array(batch, dtype=np.bool_))
    if isinstance(first, numbers.Integral):
        return Tensor._make(np.array(batch, dtype=np.int64))
    if isinstance(first, numbers.Real):
        return Tensor._make(np.array(batch, dtype=np.float64))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(first)}")


class DataLoader:
    """``for x, y in DataLoader(dataset, batch_size=32, shuffle=True, generator=g): ...``

    Loading happens in this process (``num_workers`` is accepted and ignored)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, **kwargs):
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.generator = generator
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else (lambda sample: sample))

    def __iter__(self):
        # PyTorch's iterator (_BaseDataLoaderIter) draws a base seed for its workers when it is
        # made, every epoch, with or without workers and shuffling: one random64 from the
        # loader's generator (or the default one), before the sampler draws anything
        from ... import _distributions
        from ...random import _resolve

        self._base_seed = int(_distributions.random_default(_resolve(self.generator), 1, np.int64)[0])
        return self._batches()

    def _batches(self):
        if self.batch_sampler is None:
            for idx in self.sampler:
                yield self.collate_fn(self.dataset[idx])
            return
        # a TensorDataset with the default collate: one fancy index per tensor gives the same batch
        fast = type(self.dataset) is TensorDataset and self.collate_fn is default_collate
        for indices in self.batch_sampler:
            if fast:
                yield self.dataset._batch(np.asarray(indices, dtype=np.int64))
            elif hasattr(self.dataset, "__getitems__"):
                yield self.collate_fn(self.dataset.__getitems__(indices))
            else:
                yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
