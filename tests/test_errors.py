"""Every error a user meets, with PyTorch's exact wording (facts §4-§8): each snippet runs under
both libraries and must raise the same exception type with the same message (up to PyTorch's
"(Triggered internally at ...)" suffix)."""
import subprocess
import sys
import textwrap
import warnings

import pytest

import gradwalk
import torch
from parity import assert_same_error, message, raised_by

ERRORS = {
    "backward_twice": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    """,
    "backward_twice_with_python_scalar": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = (x * 2.0).sum()
        y.backward()
        y.backward()
    """,
    "autograd_grad_twice": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x.exp().sum()
        torch.autograd.grad(y, x)
        torch.autograd.grad(y, x)
    """,
    "saved_tensor_read_after_free": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x.sin()
        y.sum().backward()
        y.grad_fn._saved_self
    """,
    "implicit_grad_for_non_scalar": """
        x = torch.tensor([1., 2.], requires_grad=True)
        (x * 2).backward()
    """,
    "implicit_grad_autograd_grad": """
        x = torch.tensor([1., 2.], requires_grad=True)
        torch.autograd.grad(x * 2, x)
    """,
    "no_grad_fn": """
        x = torch.tensor([1., 2.])
        (x * 2).sum().backward()
    """,
    "no_grad_fn_second_output": """
        x = torch.tensor([1., 2.], requires_grad=True)
        torch.autograd.backward([x.sum(), x.detach().sum()])
    """,
    "no_grad_fn_under_no_grad": """
        x = torch.tensor([1., 2.], requires_grad=True)
        with torch.no_grad():
            y = (x * 2).sum()
        y.backward()
    """,
    "unused_input": """
        a = torch.tensor([1., 2.], requires_grad=True)
        b = torch.tensor([1., 2.], requires_grad=True)
        torch.autograd.grad((a * 2).sum(), [a, b])
    """,
    "input_without_grad": """
        a = torch.tensor([1., 2.], requires_grad=True)
        b = torch.tensor([1., 2.])
        torch.autograd.grad((a * 2).sum(), [a, b])
    """,
    "empty_inputs_grad": """
        a = torch.tensor([1., 2.], requires_grad=True)
        torch.autograd.grad((a * 2).sum(), [])
    """,
    "empty_inputs_backward": """
        a = torch.tensor([1., 2.], requires_grad=True)
        (a * 2).sum().backward(inputs=[])
    """,
    "materialize_with_allow_unused_false": """
        a = torch.tensor([1., 2.], requires_grad=True)
        torch.autograd.grad((a * 2).sum(), a, materialize_grads=True, allow_unused=False)
    """,
    "gradient_of_wrong_shape": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        (x * 2).backward(torch.ones(2))
    """,
    "gradient_1_vs_0dim": """
        x = torch.tensor(1., requires_grad=True)
        (x * 2).backward(torch.ones(1))
    """,
    "gradient_count_mismatch": """
        x = torch.tensor([1., 2.], requires_grad=True)
        torch.autograd.backward([x.sum(), (x * 2).sum()], [torch.tensor(1.)])
    """,
    "gradient_not_a_tensor": """
        x = torch.tensor([1., 2.], requires_grad=True)
        torch.autograd.backward([x.sum()], [1])
    """,
    "leaf_in_place": """
        x = torch.tensor([1., 2.], requires_grad=True)
        x.add_(1)
    """,
    "leaf_in_place_operator": """
        x = torch.tensor([1., 2.], requires_grad=True)
        x += 1
    """,
    "leaf_in_place_mul": """
        x = torch.tensor([1., 2.], requires_grad=True)
        x.mul_(2)
    """,
    "leaf_in_place_zero": """
        x = torch.tensor([1., 2.], requires_grad=True)
        x.zero_()
    """,
    "view_of_leaf_setitem": """
        x = torch.tensor([1., 2.], requires_grad=True)
        x[0] = 5.
    """,
    "view_of_leaf_select_in_place": """
        x = torch.tensor([1., 2.], requires_grad=True)
        x[0].mul_(2)
    """,
    "view_of_leaf_view_in_place": """
        x = torch.tensor([1., 2.], requires_grad=True)
        x.view(2).add_(1)
    """,
    "modified_saved_output_of_mul": """
        x = torch.tensor([1., 2.], requires_grad=True)
        h = x * 2
        y = (h * h).sum()
        h.add_(1)
        y.backward()
    """,
    "modified_saved_result_of_exp": """
        x = torch.tensor([1., 2.], requires_grad=True)
        h = x.exp()
        h.mul_(2)
        h.sum().backward()
    """,
    "modified_saved_result_of_relu": """
        x = torch.tensor([1., -2.], requires_grad=True)
        h = x.relu()
        y = h.sigmoid()
        h.add_(1)
        y.sum().backward()
    """,
    "modified_saved_leaf_under_no_grad": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = (x * x).sum()
        with torch.no_grad():
            x.add_(1)
        y.backward()
    """,
    "modified_saved_tensor_float64_2d": """
        x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
        h = x * 1
        y = h.sin()
        h.zero_()
        y.sum().backward()
    """,
    "modified_saved_via_detach": """
        x = torch.tensor([1., 2.], requires_grad=True)
        h = x.exp()
        h.detach().zero_()
        h.sum().backward()
    """,
    "modified_by_pow1_name": """
        x = torch.tensor([1., 2.], requires_grad=True)
        e = torch.tensor([2., 3.], requires_grad=True)
        h = x ** e
        y = (h * 1).sum()
        z = h.log()
        h.add_(1)
        z.sum().backward()
    """,
    "shape_mismatch_add": """
        torch.ones(3) + torch.ones(4)
    """,
    "shape_mismatch_mul_2d": """
        torch.ones(2, 3, requires_grad=True) * torch.ones(3, 2)
    """,
    "shape_mismatch_sub_in_grad_graph": """
        a = torch.ones(5, 1, 3, requires_grad=True)
        a - torch.ones(4, 2)
    """,
    "shape_mismatch_where": """
        torch.where(torch.ones(3) > 0, torch.ones(3), torch.ones(2))
    """,
    "matmul_shapes": """
        torch.ones(2, 3) @ torch.ones(4, 5)
    """,
    "mm_shapes": """
        torch.mm(torch.ones(2, 3), torch.ones(2, 3))
    """,
    "dot_shapes": """
        torch.dot(torch.ones(3), torch.ones(4))
    """,
    "mv_shapes": """
        torch.mv(torch.ones(2, 3), torch.ones(4))
    """,
    "view_bad_size": """
        torch.ones(2, 3).view(4)
    """,
    "reshape_bad_size": """
        torch.ones(2, 3).reshape(5, -1)
    """,
    "cat_shapes": """
        torch.cat([torch.ones(2, 3), torch.ones(2, 4)])
    """,
    "stack_shapes": """
        torch.stack([torch.ones(3), torch.ones(4)])
    """,
    "dim_out_of_range": """
        torch.ones(2, 3).sum(2)
    """,
    "index_out_of_range": """
        torch.ones(3)[5]
    """,
    "expand_bad": """
        torch.ones(3).expand(2, 4)
    """,
    "grad_setter_wrong_size": """
        x = torch.ones(2, requires_grad=True)
        x.grad = torch.ones(3)
    """,
    "grad_setter_wrong_dtype": """
        x = torch.ones(2, requires_grad=True)
        x.grad = torch.ones(2, dtype=torch.float64)
    """,
    "grad_setter_not_a_tensor": """
        x = torch.ones(2, requires_grad=True)
        x.grad = 1
    """,
    "requires_grad_on_int_tensor_method": """
        torch.tensor([1, 2]).requires_grad_()
    """,
    "requires_grad_on_int_tensor_factory": """
        torch.tensor([1, 2], requires_grad=True)
    """,
    "requires_grad_false_on_non_leaf": """
        x = torch.ones(2, requires_grad=True)
        (x * 2).requires_grad_(False)
    """,
    "retain_grad_without_grad": """
        torch.ones(2).retain_grad()
    """,
    "hook_on_tensor_without_grad": """
        torch.ones(2).register_hook(lambda g: g)
    """,
    "post_accumulate_hook_on_non_leaf": """
        x = torch.ones(2, requires_grad=True)
        (x * 2).register_post_accumulate_grad_hook(lambda p: None)
    """,
    "hook_changes_size": """
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: torch.ones(3))
        y.sum().backward()
    """,
    "hook_returns_non_tensor": """
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: 1)
        y.sum().backward()
    """,
    "node_hook_returns_non_tuple": """
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        y.grad_fn.register_prehook(lambda g: 1)
        y.sum().backward()
    """,
    "posthook_replaces_none": """
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        y.grad_fn.register_hook(lambda gin, gout: (gin[0], torch.ones(2)))
        y.sum().backward()
    """,
    "numpy_of_grad_tensor": """
        torch.ones(2, requires_grad=True).numpy()
    """,
    "item_of_many": """
        torch.ones(2).item()
    """,
    "bool_of_many": """
        bool(torch.ones(2))
    """,
    "detach_view_in_place": """
        x = torch.ones(4)
        x[1:].detach_()
    """,
    "split_sizes_wrong_sum": """
        torch.ones(4).split([1, 2])
    """,
    "clamp_without_bounds": """
        torch.ones(2).clamp()
    """,
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_matches_pytorch(name):
    assert_same_error(ERRORS[name])


def test_backward_twice_message_in_full():
    error = raised_by("gradwalk", ERRORS["backward_twice"])
    assert message(error) == (
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed when "
        "you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
        "through the graph a second time or if you need to access saved tensors after calling backward.")


def test_modified_saved_tensor_messages_in_full():
    error = raised_by("gradwalk", ERRORS["modified_saved_output_of_mul"])
    assert message(error) == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [2]], which is output 0 of AddBackward0, is at version 1; "
        "expected version 0 instead. Hint: enable anomaly detection to find the operation that failed "
        "to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
    ).replace("AddBackward0", "Add")
    error = raised_by("gradwalk", ERRORS["modified_saved_leaf_under_no_grad"])
    assert "[torch.FloatTensor [2]] is at version 1; expected version 0 instead." in message(error)


def test_shape_error_names_both_sizes():
    error = raised_by("gradwalk", ERRORS["shape_mismatch_add"])
    assert message(error) == ("The size of tensor a (3) must match the size of tensor b (4) at "
                              "non-singleton dimension 0")


def test_reading_grad_of_a_non_leaf_warns_like_pytorch():
    caught = []
    for lib in (gradwalk, torch):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            assert y.grad is None
        caught.append([(w.category, message(w.message)) for w in record])
        y.retain_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert y.grad is None  # no warning once retaining
    assert caught[0] == caught[1] and len(caught[0]) == 1 and caught[0][0][0] is UserWarning


def test_create_graph_backward_warns_once_per_process_like_pytorch():
    """PyTorch warns with TORCH_WARN_ONCE, so each library runs in a fresh process."""
    script = textwrap.dedent("""
        import warnings, sys
        import {lib} as torch
        x = torch.tensor(2.0, requires_grad=True)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            (x ** 3).backward(create_graph=True)
            x.grad = None
            (x ** 3).backward(create_graph=True)
        for w in record:
            print(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
    """)
    outputs = [subprocess.run([sys.executable, "-c", script.format(lib=lib)], capture_output=True,
                              text=True, check=True).stdout for lib in ("gradwalk", "torch")]
    assert outputs[0] == outputs[1]
    assert outputs[0].count("UserWarning Using backward() with create_graph=True") == 1


def test_in_place_allowed_under_no_grad_and_through_data():
    for lib in (gradwalk, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            x.add_(1)
        x.data.mul_(2)
        x.detach().add_(1)
        assert x.tolist() == [5.0, 7.0] and x.is_leaf and x.requires_grad


def test_in_place_on_a_tensor_nobody_saved_is_fine():
    for lib in (gradwalk, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        y = h + 1
        h.add_(1)
        y.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
