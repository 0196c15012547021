"""``gradwalk.utils.data``: ``Dataset``, ``TensorDataset``, ``DataLoader`` and samplers.

    >>> loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True,
    ...                     generator=gradwalk.Generator().manual_seed(0))
    >>> for xb, yb in loader: ...
"""
from .dataloader import DataLoader, default_collate  # noqa: F401
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split  # noqa: F401
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler  # noqa: F401
