"""What real scripts print, run under gradwalk and under PyTorch: the same lines.

Tutorials and lecture notebooks print tensors (``print(x)``, ``f"loss {loss}"``) and build them
with the legacy constructor (``torch.Tensor(x.size())``, ``torch.LongTensor([1, 2])``); each test
here is such a snippet, run by both libraries, with the printed text compared line by line.
"""

import pytest
import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import assert_same_output, run_in


def test_a_multi_row_tensor_breaks_the_line_before_its_suffix_as_pytorch_does():
    assert_same_output("""
        torch.manual_seed(0)
        w = torch.ones(3, 40, dtype=torch.float64) / 7
        print(w.requires_grad_())
        print(w * 2)
        print(torch.ones(2, 3, requires_grad=True))   # short enough: the suffix stays on the line
        print(torch.arange(12.).reshape(3, 4).double() * 1.5)
        print(torch.zeros(2, 38, dtype=torch.float16))
    """)


def test_f_string_of_a_zero_dim_tensor_is_its_python_number():
    assert_same_output("""
        loss = torch.tensor(2.4543561935424805)
        print(f"loss {loss}")
        print(f"loss {loss:.3f}", f"{torch.tensor(3)}", f"{torch.tensor(True)}")
        print(f"{torch.tensor(2.5, requires_grad=True) * 2}")
        print(f"{torch.tensor([1., 2.])}")
        print("{}".format(torch.tensor(0.1, dtype=torch.float64)))
        p = torch.nn.Parameter(torch.tensor(2.))
        print(f"{p}")   # a subclass keeps str()
    """)
    for library in ("gradwalk", "torch"):
        with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
            run_in(library, "f'{torch.ones(2):.2f}'")


def test_the_legacy_constructor_takes_sizes_or_data():
    assert_same_output("""
        x = torch.ones(2, 3)
        print(torch.Tensor(x.size()).shape, torch.Tensor(2, 3).shape, torch.Tensor(4).shape)
        print(torch.Tensor(), torch.Tensor([2, 3]), torch.Tensor((2, 3)), torch.Tensor([[1, 2]]).dtype)
        print(torch.Tensor(np.array([1, 2])))
        print(torch.LongTensor([1, 2]), torch.LongTensor(3).dtype, torch.FloatTensor(2, 2).dtype)
        print(torch.DoubleTensor([1]), torch.BoolTensor([1, 0]), torch.ByteTensor([3]))
        print(isinstance(x.long(), torch.LongTensor), isinstance(x, torch.LongTensor),
              isinstance(x, torch.FloatTensor), torch.LongTensor)
        xl = x.long()
        y = torch.Tensor(xl)   # torch.Tensor(tensor) shares the tensor's memory and keeps its dtype
        print(y.dtype, y.data_ptr() == xl.data_ptr())
    """)
    for library in ("gradwalk", "torch"):
        with pytest.raises(TypeError, match=r"new\(\): data must be a sequence \(got float\)"):
            run_in(library, "torch.Tensor(2.5)")
        with pytest.raises(TypeError, match=r"expected TensorOptions\(dtype=long int"):
            run_in(library, "torch.LongTensor(torch.ones(2))")
