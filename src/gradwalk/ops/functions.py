"""Every op function in one namespace (``gradwalk.<name>``); formulas import it as ``F``."""
from ._util import FUNCTIONS
from . import pointwise, reduction, shape, linalg, factories, inplace, activation  # noqa: F401
from . import extra, einsum  # noqa: F401
from . import random_ops, linalg_inverse  # noqa: F401
from . import misc, histogram  # noqa: F401
from . import elementwise_more  # noqa: F401
from . import indexing_more, shape_more, tensor_more, nn_more  # noqa: F401
from . import products, reduction_more, linalg_more  # noqa: F401

globals().update(FUNCTIONS)
