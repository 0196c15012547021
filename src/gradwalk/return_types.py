"""``torch.return_types``: the named tuples ops with two results return (``x.max(dim=1)``).

Each op has its own type, named after it, printed the way PyTorch prints it:

    >>> import gradwalk as torch
    >>> torch.tensor([[1., 5.], [3., 2.]]).max(dim=1)
    torch.return_types.max(
    values=tensor([5., 3.]),
    indices=tensor([1, 0]))
"""
import collections


def _return_type(name, fields=("values", "indices")):
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})
    return cls


max = _return_type("max")  # noqa: A001 - PyTorch's names
min = _return_type("min")  # noqa: A001
sort = _return_type("sort")
topk = _return_type("topk")
median = _return_type("median")
nanmedian = _return_type("nanmedian")
kthvalue = _return_type("kthvalue")
mode = _return_type("mode")
cummax = _return_type("cummax")
cummin = _return_type("cummin")
aminmax = _return_type("aminmax", ("min", "max"))
svd = _return_type("svd", ("U", "S", "V"))
histogram = _return_type("histogram", ("hist", "bin_edges"))
slogdet = _return_type("slogdet", ("sign", "logabsdet"))
linalg_slogdet = _return_type("linalg_slogdet", ("sign", "logabsdet"))
triangular_solve = _return_type("triangular_solve", ("solution", "cloned_coefficient"))
qr = _return_type("qr", ("Q", "R"))
linalg_qr = _return_type("linalg_qr", ("Q", "R"))
linalg_eigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd = _return_type("linalg_svd", ("U", "S", "Vh"))
linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ("L", "info"))
linalg_solve_ex = _return_type("linalg_solve_ex", ("result", "info"))
linalg_inv_ex = _return_type("linalg_inv_ex", ("inverse", "info"))
linalg_lstsq = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_lu_factor = _return_type("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu = _return_type("linalg_lu", ("P", "L", "U"))
lu_unpack = _return_type("lu_unpack", ("P", "L", "U"))
