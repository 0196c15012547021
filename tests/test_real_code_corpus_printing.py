"""What the third real-code corpus printed differently: ``print(type(x))`` of a tensor and of a
parameter (the tensors tutorial, the nn tutorial's forward hook), checked beside PyTorch."""
import torch  # noqa: F401  (real PyTorch: these tests fail without it)

from parity import run_both


def test_the_type_of_a_tensor_and_of_a_parameter_print_as_in_pytorch():
    gw, pt = run_both("""
        x = torch.empty(3, 4)
        p = torch.nn.Parameter(torch.ones(2))
        text = [str(type(x)), repr(type(p)), f"{type(x.sum())}", type(x).__name__, type(x).__qualname__]
    """)
    assert gw["text"] == pt["text"]
    assert gw["text"][:2] == ["<class 'torch.Tensor'>", "<class 'torch.nn.parameter.Parameter'>"]


def test_tensors_and_parameters_still_pickle_and_deep_copy():
    gw, pt = run_both("""
        import copy, pickle
        p = torch.nn.Parameter(torch.tensor([1.5, 2.0]))
        q = pickle.loads(pickle.dumps(p))
        frozen = copy.deepcopy(torch.nn.Parameter(torch.ones(1), requires_grad=False))
        t = pickle.loads(pickle.dumps(torch.ones(2, requires_grad=True)))
        model = copy.deepcopy(torch.nn.Linear(2, 1))
        facts = [type(q).__name__, q.tolist(), q.requires_grad, frozen.requires_grad, type(frozen).__name__,
                 t.requires_grad, type(model.weight).__name__, model.weight.requires_grad]
    """)
    assert gw["facts"] == pt["facts"]
