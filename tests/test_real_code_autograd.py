"""Autograd behaviour that real code relies on, run under gradwalk and under PyTorch side by side:
legal code that must run (a ``view`` of a ``split()`` output, ``t[range(n), idx] -= 1``) and
answers that must agree, errors included (a second backward through ``index_put``, pruning in
``autograd.grad``, ``no_grad`` on a generator, ...)."""
import pytest
import torch  # (real PyTorch: these tests fail without it)
import gradwalk

from parity import assert_same, message, run_both, run_in


def test_attention_heads_view_a_split_output():
    # minGPT / nanoGPT: q, k, v = c_attn(x).split(C, dim=2); q.view(B, T, nh, hs).transpose(1, 2)
    gw, pt = run_both("""
        B, T, C, nh = 2, 3, 8, 2
        x = (torch.arange(B * T * 3 * C, dtype=torch.float32).reshape(B, T, 3 * C) / 10).requires_grad_()
        q, k, v = x.split(C, dim=2)
        q = q.view(B, T, nh, C // nh).transpose(1, 2)
        k = k.view(B, T, nh, C // nh).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        att.pow(2).sum().backward()
        facts = (q.stride(), q.grad_fn.name(), q.grad_fn.next_functions[0][0].name(),
                 q._base is x)
    """)
    assert gw["facts"] == pt["facts"]
    assert_same(gw["att"], pt["att"], rtol=1e-5)
    assert_same(gw["x"].grad, pt["x"].grad, rtol=1e-4, atol=1e-6)


def test_views_that_cross_chunks_are_refused_as_pytorch_refuses_them():
    results = {}
    for library in ("gradwalk", "torch"):
        outcomes = []
        for snippet in ["torch.arange(24.).reshape(4, 6)[:, 1:3].view(4, 2, 1).stride()",
                        "torch.arange(24.).reshape(4, 6)[:, 1:3].view(8)",
                        "torch.arange(24.).reshape(2, 3, 4).permute(1, 0, 2).view(3, 2, 2, 2).stride()",
                        "torch.arange(24.).reshape(2, 3, 4).permute(1, 0, 2).view(6, 4)",
                        "torch.arange(24.).reshape(2, 3, 4).permute(1, 0, 2).reshape(6, 4).grad_fn",
                        "torch.arange(12.)[::2].view(3, 2).stride()"]:
            try:
                outcomes.append(run_in(library, f"result = {snippet}")["result"])
            except RuntimeError as error:
                outcomes.append(message(error))
        results[library] = outcomes
    assert results["gradwalk"] == results["torch"]


def test_subtracting_one_at_each_rows_target_with_a_range_index():
    # the softmax-gradient trick of a lecture notebook: dlogits[range(n), Yb] -= 1
    gw, pt = run_both("""
        logits = torch.tensor([[0.5, 1.0, -1.0, 2.0], [0.0, 0.3, 0.2, 0.1], [1.0, 1.0, 1.0, 1.0]],
                              requires_grad=True)
        Yb = torch.tensor([1, 0, 3])
        dlogits = logits.softmax(1).clone()   # softmax saves its output: write into a copy
        dlogits[range(3), Yb] -= 1
        dlogits.pow(2).sum().backward()
        picked = logits[range(3), Yb]
        node = dlogits.grad_fn.name()
    """)
    assert gw["node"] == pt["node"]
    assert_same(gw["dlogits"], pt["dlogits"])
    assert_same(gw["picked"], pt["picked"])
    assert_same(gw["logits"].grad, pt["logits"].grad, rtol=1e-5)


@pytest.mark.parametrize("write", ["t[torch.tensor([0, 2]), torch.tensor([1, 1])] = 5.",
                                   "t[range(3), [1, 0, 3]] = 0.",
                                   "t[torch.tensor([True, False, True])] = 0.",
                                   "t[:, [0, 1]] = 0."])
def test_a_second_backward_through_index_put_is_refused(write):
    snippet = f"""
        w = torch.ones(3, 4, requires_grad=True)
        t = w.clone()
        {write}
        s = t.sum()
        s.backward(retain_graph=True)
        s.backward()           # retained: the gradient doubles
        doubled = w.grad.clone()
        s.backward()
    """
    errors = []
    for library in ("gradwalk", "torch"):
        with pytest.raises(RuntimeError) as info:
            run_in(library, snippet)
        errors.append(message(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("Trying to backward through the graph a second time")


def test_no_grad_on_a_generator_function_holds_inside_the_generator():
    gw, pt = run_both("""
        @torch.no_grad()
        def batches():
            for i in range(2):
                yield torch.is_grad_enabled()
        @torch.enable_grad()
        def regrad():
            yield torch.is_grad_enabled()
        inside = list(batches())
        with torch.no_grad():
            reenabled = list(regrad())
        outside = torch.is_grad_enabled()
        def sampler():   # a generator that yields tensors made under no_grad, as a sampling loop
            x = torch.ones(2, requires_grad=True)
            for _ in range(2):
                x = x * 2
                yield x.requires_grad
        flags = list(torch.no_grad()(sampler)())
    """)
    assert (gw["inside"], gw["reenabled"], gw["outside"], gw["flags"]) == \
           (pt["inside"], pt["reenabled"], pt["outside"], pt["flags"]) == ([False, False], [True], True, [False, False])


def test_mse_loss_of_float_predictions_and_integer_targets_is_float32():
    gw, pt = run_both("""
        pred = torch.tensor([1., 2., 4.], requires_grad=True)
        loss = torch.nn.MSELoss()(pred, torch.tensor([1, 2, 3]))
        loss.backward()
        l1 = torch.nn.functional.l1_loss(pred, torch.tensor([1, 2, 3]))
        mixed = torch.nn.MSELoss()(pred, torch.tensor([1., 2., 3.], dtype=torch.float64))
        promoted = [torch.promote_types(torch.float32, torch.int64), torch.promote_types(torch.bool, torch.int8),
                    torch.promote_types(torch.float16, torch.int64), torch.promote_types(torch.uint8, torch.int8)]
    """)
    dtypes = [str(ns[name].dtype) for ns in (gw, pt) for name in ("loss", "l1", "mixed")]
    assert dtypes[:3] == dtypes[3:] == ["torch.float32", "torch.float32", "torch.float64"]
    assert [str(d) for d in gw["promoted"]] == [str(d) for d in pt["promoted"]]
    assert_same(gw["loss"], pt["loss"])
    assert_same(gw["pred"].grad, pt["pred"].grad)


def test_autograd_grad_runs_only_the_nodes_on_a_path_to_its_inputs():
    gw, pt = run_both("""
        x = torch.ones(2, requires_grad=True)
        w = torch.ones(2, requires_grad=True)
        v = x * 2
        fired = []
        a, b = v * 3, w * 4
        b.register_hook(lambda g: fired.append("b tensor hook"))
        w.register_hook(lambda g: fired.append("w tensor hook"))
        b.grad_fn.register_prehook(lambda g: fired.append("b prehook"))
        a.grad_fn.register_prehook(lambda g: fired.append("a prehook"))
        v.grad_fn.register_prehook(lambda g: fired.append("v prehook"))
        out = (a + b).sum()
        runs = []
        for inputs in ([v], [x], [w]):
            grads = torch.autograd.grad(out, inputs, retain_graph=True)
            runs.append((fired[:], [g.tolist() for g in grads]))
            fired.clear()
    """)
    assert gw["runs"] == pt["runs"]
    assert pt["runs"][0][0] == ["a prehook"]  # the branch to w is pruned, so is v's own node


def test_materialized_zeros_for_unused_inputs_require_grad_under_create_graph():
    gw, pt = run_both("""
        x, unused = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
        y = (x * x).sum()
        flags = []
        for create_graph in (False, True):
            grads = torch.autograd.grad(y, [x, unused], materialize_grads=True, create_graph=create_graph,
                                        retain_graph=True)
            flags.append([(g.requires_grad, g.grad_fn is None, g.tolist()) for g in grads])
    """)
    assert gw["flags"] == pt["flags"]


def test_custom_function_gradients_for_non_differentiable_outputs():
    gw, pt = run_both("""
        seen = []
        class Sorted(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx._materialize_non_diff_grads = False
                values, order = x.sort()
                ctx.mark_non_differentiable(order)
                ctx.save_for_backward(order)
                return values, order
            @staticmethod
            def backward(ctx, g, g_order):
                seen.append(g_order)
                order, = ctx.saved_tensors
                return torch.zeros_like(g).scatter(0, order, g)
        class Halves(torch.autograd.Function):  # default: a zero gradient for the non-diff output
            @staticmethod
            def forward(ctx, x):
                other = x.detach() * 0.5
                ctx.mark_non_differentiable(other)
                return x * 0.5, other
            @staticmethod
            def backward(ctx, g, g_other):
                seen.append(g_other.tolist())
                return g * 0.5
        x = torch.tensor([3., 1., 2.], requires_grad=True)
        values, order = Sorted.apply(x)
        (values * torch.tensor([1., 2., 3.])).sum().backward()
        half, other = Halves.apply(x)
        half.sum().backward()
    """)
    assert gw["seen"] == pt["seen"] == [None, [0.0, 0.0, 0.0]]
    assert_same(gw["x"].grad, pt["x"].grad)


def test_a_post_accumulate_grad_hook_must_return_none():
    errors = []
    for library in ("gradwalk", "torch"):
        with pytest.raises(RuntimeError) as info:
            run_in(library, """
                w = torch.ones(2, requires_grad=True)
                w.register_post_accumulate_grad_hook(lambda p: p * 2)
                (w * 2).sum().backward()
            """)
        errors.append(message(info.value))
    assert errors[0] == errors[1] == "Tensor post accumulate grad hooks should return None."


def test_a_custom_backward_returning_none_into_a_built_in_node():
    gw, pt = run_both("""
        class Blocked(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
            @staticmethod
            def backward(ctx, g):
                return None
        class FirstOnly(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y, x + y
            @staticmethod
            def backward(ctx, g1, g2):
                return g1, None
        y = torch.ones(2, requires_grad=True)
        z = Blocked.apply(y * 3)             # MulBackward0 gets no gradient: gives none either
        (z.sum() + (y * 1).sum()).backward()
        p, q = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
        u, v = FirstOnly.apply(p * 3, q * 5)
        (u.sum() + v.sum()).backward()
        grads = (y.grad.tolist(), p.grad.tolist(), q.grad)
    """)
    assert gw["grads"] == pt["grads"]


def test_calling_a_node_with_the_wrong_number_of_gradients_is_a_type_error():
    # PyTorch's test_autograd.py test_grad_fn_badcalls
    messages = {}
    for lib in (gradwalk, torch):
        x = lib.ones(1, requires_grad=True)
        y = x ** 2
        found = []
        for args in [(x.detach(), x.detach()), ()]:
            try:
                y.grad_fn(*args)
            except TypeError as e:
                found.append(str(e))
        found.append(y.grad_fn(x.detach()).tolist())
        messages[lib.__name__] = found
    assert messages["gradwalk"] == messages["torch"]


def test_prod_gradients_can_be_differentiated_again():
    # test_autograd.py test_custom_autograd_repeated_grad_grad: x.prod(-1).prod(-1), grad of grad
    gw, pt = run_both("""
        x = torch.tensor([[1.5, 2.0, -3.0], [0.7, 1.1, 2.2]], requires_grad=True)
        rows = []
        for y in [x.prod(), x.prod(1), x.prod(0, keepdim=True), x.prod(-1).prod(-1)]:
            g, = torch.autograd.grad(y.sum(), x, create_graph=True)
            gg, = torch.autograd.grad(g.sum(), x)
            rows.append((g.grad_fn.name(), g.tolist(), gg.tolist()))
        z = torch.tensor([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]], requires_grad=True)
        zeros = [torch.autograd.grad(z.prod(), z)[0].tolist(), torch.autograd.grad(z.prod(1).sum(), z)[0].tolist()]
    """)
    assert gw["rows"] == pt["rows"]
    assert gw["zeros"] == pt["zeros"]


def test_a_list_holding_slices_or_lists_indexes_as_a_tuple():
    # test_indexing / test_setitem: x[[slice(None), [2, 3]]] is x[:, [2, 3]], with a warning
    gw, pt = run_both("""
        import warnings
        x = torch.arange(1., 17).view(4, 4).requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shapes = [tuple(x[i].shape) for i in ([slice(None), [2, 3]], [[2, 3], slice(None)],
                                                 [[1, 1, 3], [0]], [0], [[0, 1], [1, 0]], [None, 0])]
        warned = len(caught)
        y = x * 1
        y[[[0, 3], [2, 2]]] = 0
        y.sum().backward()
        grad = x.grad.tolist()
    """)
    assert gw["shapes"] == pt["shapes"]
    assert gw["warned"] == pt["warned"] == 5
    assert gw["grad"] == pt["grad"]


def test_a_dirty_input_comes_back_itself_without_a_graph():
    # test_return_duplicate_inplace: forward marks x dirty and returns (x, x); a is b, also under
    # no_grad or when nothing requires grad
    gw, pt = run_both("""
        class DoubleInplace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x
            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2
        facts = []
        c = torch.ones(3)
        a, b = DoubleInplace.apply(c)
        facts.append((a is b, a is c, c._version, c.tolist()))
        with torch.no_grad():
            c = torch.ones(3, requires_grad=True).clone()
            a, b = DoubleInplace.apply(c)
            facts.append((a is b, a is c, c._version))
    """)
    assert gw["facts"] == pt["facts"]


def test_deleting_a_tensors_data_or_autograd_attributes_is_refused():
    # test_attribute_deletion
    results = {}
    for lib in (gradwalk, torch):
        x = lib.randn(2, 2, requires_grad=True)
        found = []
        for stmt in ["del x.grad", "del x.data", "x.data = None", "del x.requires_grad",
                     "del x._grad_fn", "del x._backward_hooks"]:
            try:
                exec(stmt, {"x": x})
                found.append((stmt, "ok"))
            except (RuntimeError, TypeError) as e:
                found.append((stmt, type(e).__name__, message(e)))
        results[lib.__name__] = found
    assert results["gradwalk"] == results["torch"]


def test_legacy_methods_pytorchs_tests_call():
    # test_type_conversions, test_setitem_mask (x.new), test_put, test_resize, test_dstack,
    # test_next_functions (torch._C._functions.AccumulateGrad)
    gw, pt = run_both("""
        import warnings
        x = torch.randn(3, 4)
        types = [x.type(torch.IntTensor).dtype, x.type("torch.DoubleTensor").dtype,
                 isinstance(x.type(torch.ByteTensor), torch.ByteTensor)]
        made = [x.new(2, 3).shape, x.new([1, 2]).tolist(), x.new(x.size()).shape, x.double().new(1).dtype]
        root = torch.arange(20.).view(4, 5).requires_grad_()
        values = torch.tensor([10., 20., 30., 40.], requires_grad=True)
        put = root.clone()
        put.put_(torch.tensor([1, 2, -1, -2]), values)
        (put * torch.arange(20.).view(4, 5)).sum().backward()
        put_facts = (put.tolist(), root.grad.tolist(), values.grad.tolist(),
                     root.t().clone().t().put(torch.tensor([0]), torch.tensor([-1.])).tolist())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = root.resize(5, 4)
        resize_facts = (r.shape, r.grad_fn.name(), str(caught[0].message))
        r.sum().backward()
        a, b = torch.ones(2, 2, requires_grad=True), torch.zeros(2, 2, requires_grad=True)
        d = torch.dstack([a, b])
        d.backward(torch.arange(8.).view(2, 2, 2))
        stacked = (d.shape, d.grad_fn.name(), a.grad.tolist(), b.grad.tolist(),
                   torch.dstack([torch.ones(3), torch.zeros(3)]).shape)
        leaf_node = (a + b).grad_fn.next_functions[0][0]
        accumulate = (isinstance(leaf_node, torch._C._functions.AccumulateGrad),
                      torch._C._functions.AccumulateGrad.__name__)
    """)
    for name in ("types", "made", "put_facts", "resize_facts", "stacked", "accumulate"):
        assert str(gw[name]) == str(pt[name]), name


def test_gradient_edges_as_inputs_and_outputs_of_grad_and_backward():
    # test_grad_to_node*, test_backward_to_node, test_gradient_edge_graph_ownership
    gw, pt = run_both("""
        GradientEdge, get_gradient_edge = torch.autograd.graph.GradientEdge, torch.autograd.graph.get_gradient_edge
        x = torch.tensor([1.0, 2.0], requires_grad=True).clone()
        edge = get_gradient_edge(x)
        x *= 2
        g_old, g_new = torch.autograd.grad(x.sum(), (edge, x), retain_graph=True)
        leaf = torch.tensor([3.0, 4.0], requires_grad=True)
        by_edge = torch.autograd.grad((leaf * leaf).sum(), get_gradient_edge(leaf))
        r = torch.autograd._functions.Resize.apply(leaf, (2, 1))
        resized = (r.grad_fn.name(), torch.autograd.grad(r.sum(), get_gradient_edge(r))[0].tolist())
        y = torch.tensor([1.0, 1.0], requires_grad=True).clone()
        out = x.clone()
        try:
            torch.autograd.grad(out.sum(), (x, GradientEdge(y.grad_fn, y.output_nr)),
                                allow_unused=True, materialize_grads=True)
        except RuntimeError as e:
            materialize = str(e)
        torch.autograd.backward(out.sum(), inputs=(GradientEdge(x.grad_fn, x.output_nr), y))
        inp = torch.ones(1, requires_grad=True)
        mid = inp.clone()
        out_edge = get_gradient_edge(mid * 3)
        torch.autograd.backward(out_edge)
        seeded = inp.grad.tolist()
        try:
            torch.autograd.backward(out_edge, grad_tensors=torch.ones(3))
        except RuntimeError as e:
            mismatch = str(e)
        grads = (g_old.tolist(), g_new.tolist(), by_edge[0].tolist(), resized, y.grad, seeded)
    """)
    assert gw["grads"] == pt["grads"]
    assert gw["materialize"] == pt["materialize"]
    assert gw["mismatch"] == pt["mismatch"]


def test_backward_with_a_non_leaf_input_runs_its_node_and_keeps_retaining():
    # test_prehook_ordering: backward(inputs=(b,)) runs b's tensor hook, then b.grad_fn's
    # pre-hooks (PyTorch marks that node needed and calls b.retain_grad())
    gw, pt = run_both("""
        log = []
        def hook1(g):
            log.append(1)
            return g * 3
        def hook2(gs):
            log.append(2)
            return tuple(g * 2 for g in gs)
        a = torch.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(hook2)
        b.register_hook(hook1)
        a.register_hook(hook1)
        b.sum().backward(inputs=(b,), retain_graph=True)
        first = (list(log), b.grad.item(), a.grad, b.retains_grad)
        b.sum().backward()
        later = (list(log), b.grad.item(), a.grad.item())
    """)
    assert gw["first"] == pt["first"]
    assert gw["later"] == pt["later"]


def test_batched_grad_outputs_of_the_wrong_shape_are_named():
    # test_grad_batched_grad
    results = {}
    for lib in (gradwalk, torch):
        x = lib.randn(2, 2, requires_grad=True)
        found = []
        for out, g in [(x.clone(), lib.ones(2, 2)), (x.sum(), lib.ones(2).unsqueeze(1)),
                       (x.clone(), lib.ones(3, 2, 3))]:
            try:
                lib.autograd.grad(out, (x,), (g,), is_grads_batched=True)
            except RuntimeError as e:
                found.append(message(e))
        results[lib.__name__] = found
    assert results["gradwalk"] == results["torch"]
    assert len(results["torch"]) == 3


def test_calling_a_function_instance_is_the_legacy_error():
    # test_naughty_autograd_function_attribute_access: Id()(x)
    results = {}
    for lib in (gradwalk, torch):
        class Id(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        with pytest.warns(DeprecationWarning, match="should not be instantiated"):
            f = Id()
        with pytest.raises(RuntimeError) as caught:
            f(lib.zeros(1, requires_grad=True))
        results[lib.__name__] = (message(caught.value), Id.apply(lib.zeros(1, requires_grad=True)).grad_fn.name())
    assert results["gradwalk"] == results["torch"]
