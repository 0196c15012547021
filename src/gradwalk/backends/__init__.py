"""``torch.backends``: the flags scripts read or set (``cudnn.deterministic = True``) and the
availability checks (``mps.is_available()``), as a CPU-only PyTorch build answers them."""
from . import cuda, cudnn, mps  # noqa: F401
