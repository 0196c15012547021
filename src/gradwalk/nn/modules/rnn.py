"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells.

PyTorch's parameters, names and initialisation (``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``,
``bias_hh_l0``, then ``..._reverse`` for the backward direction, ``weight_hr_l0`` with
``proj_size``; every parameter uniform in +-1/sqrt(hidden_size), in that order), and the forward
pass as ATen's CPU code (``aten/src/ATen/native/RNN.cpp``) composes it from ordinary ops, so the
graph is made of the nodes PyTorch's is (AddmmBackward0, SigmoidBackward0, StackBackward0, ...)
and autograd needs nothing new. One time step of an LSTM::

    gates = linear(h, W_hh, b_hh) + linear(x, W_ih, b_ih)     # x's part for all steps at once
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()                                  # then h @ W_hr.T with proj_size

(PyTorch runs a float32 LSTM through oneDNN on CPU; its last bits can differ from these ops'.)
``PackedSequence`` inputs are not supported: they raise a ``NotImplementedError`` naming it.
"""
import math
import numbers
import warnings

from ..._device import on_cpu
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import _empty
from .module import Module

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _refuse_packed(input, name):
    if not isinstance(input, Tensor):
        what = type(input).__name__
        if what == "PackedSequence":
            raise NotImplementedError(
                f"{name}: PackedSequence inputs (torch.nn.utils.rnn.pack_padded_sequence) are not "
                "supported by gradwalk; pass a padded tensor instead")
        raise TypeError(f"{name}: expected a Tensor as input, got {what}")


def _ops_zeros(shape, like):
    from ...ops.factories import zeros

    return zeros(*shape, dtype=like.dtype)


# --- one time step, as ATen's cells (the input's part may be precomputed for all steps) ---------

def _rnn_step(x_part, h, w_hh, b_hh, relu):
    pre = F.linear(h, w_hh, b_hh) + x_part
    return pre.relu() if relu else pre.tanh()


def _lstm_step(x_part, hc, w_hh, b_hh, w_hr):
    h, c = hc
    gates = F.linear(h, w_hh, b_hh) + x_part
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate, forgetgate = ingate.sigmoid(), forgetgate.sigmoid()
    cellgate, outgate = cellgate.tanh(), outgate.sigmoid()
    cy = forgetgate * c + ingate * cellgate
    hy = outgate * cy.tanh()
    if w_hr is not None:
        hy = hy.matmul(w_hr.t())
    return hy, cy


def _gru_step(x_part, h, w_hh, b_hh):
    i_r, i_z, i_n = x_part.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    reset_gate = (h_r + i_r).sigmoid()
    input_gate = (h_z + i_z).sigmoid()
    new_gate = (i_n + h_n * reset_gate).tanh()
    return (h - new_gate) * input_gate + new_gate


def _step(mode, x_part, hidden, p):
    if mode == "LSTM":
        return _lstm_step(x_part, hidden, p["w_hh"], p["b_hh"], p["w_hr"])
    if mode == "GRU":
        return _gru_step(x_part, hidden, p["w_hh"], p["b_hh"])
    return _rnn_step(x_part, hidden, p["w_hh"], p["b_hh"], mode == "RNN_RELU")


def _output_of(mode, hidden):
    return hidden[0] if mode == "LSTM" else hidden


def _run_direction(mode, steps, hidden, p, precomputed):
    """ATen's FullLayer over a list of time steps: the hidden state after each, and the last."""
    outputs = []
    for x in steps:
        x_part = x if precomputed else F.linear(x, p["w_ih"], p["b_ih"])
        hidden = _step(mode, x_part, hidden, p)
        outputs.append(_output_of(mode, hidden))
    return outputs, hidden


def _run_layers(mode, input, hiddens, params, num_layers, dropout, training, bidirectional):
    """ATen's apply_layer_stack: each layer over the whole sequence (time first), dropout between
    layers while training. ``hiddens``/``params``: one entry per layer and direction."""
    from ...ops.shape import cat, stack

    layer_input = input
    finals = []
    dirs = 2 if bidirectional else 1
    for layer in range(num_layers):
        if bidirectional:
            # BidirectionalLayer: each direction runs over the unbound steps (no precomputed
            # input part), the reverse one over them reversed; outputs concatenated on features
            steps = list(layer_input.unbind(0))
            fw_out, fw_hidden = _run_direction(mode, steps, hiddens[2 * layer], params[2 * layer], False)
            rev_out, rev_hidden = _run_direction(mode, steps[::-1], hiddens[2 * layer + 1],
                                                 params[2 * layer + 1], False)
            fw, rev = stack(fw_out, 0), stack(rev_out[::-1], 0)
            layer_output = cat([fw, rev], fw.dim() - 1)
            finals += [fw_hidden, rev_hidden]
        else:
            # FullLayer on CPU: the input's part of every step in one linear, then the steps
            p = params[layer * dirs]
            steps = list(F.linear(layer_input, p["w_ih"], p["b_ih"]).unbind(0))
            outputs, hidden = _run_direction(mode, steps, hiddens[layer], p, True)
            layer_output = stack(outputs, 0)
            finals.append(hidden)
        layer_input = layer_output
        if dropout != 0 and training and layer < num_layers - 1:
            layer_input = F.dropout(layer_input, dropout, True)
    return layer_input, finals


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters, the checks and the layer stack."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        on_cpu(device)
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability "
                             "of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero "
                          "dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(_empty(*shape, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, n) if hasattr(self, n) else None for n in self._flat_weights_names]

    def __setattr__(self, attr, value):
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self):
        """A no-op, as in PyTorch on CPU (it packs weights for cuDNN)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    # --- checks, with PyTorch's messages
    def check_input(self, input, batch_sizes=None):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                             f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        return hx

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # --- the layer stack
    def _layer_params(self):
        """One dict per layer and direction: w_ih, w_hh, b_ih, b_hh, w_hr (None when absent)."""
        out = []
        for names in self._all_weights:
            weights = dict(zip((n.split("_l")[0] for n in names), (getattr(self, n) for n in names)))
            out.append({"w_ih": weights["weight_ih"], "w_hh": weights["weight_hh"],
                        "b_ih": weights.get("bias_ih"), "b_hh": weights.get("bias_hh"),
                        "w_hr": weights.get("weight_hr")})
        return out

    def _run(self, input, hiddens):
        """Time-first ``input``; ``hiddens`` one per layer and direction. Output and finals."""
        if self.batch_first:
            input = input.transpose(0, 1)
        if input.size(0) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        output, finals = _run_layers(self.mode, input, hiddens, self._layer_params(), self.num_layers,
                                     self.dropout, self.training, self.bidirectional)
        if self.batch_first:
            output = output.transpose(0, 1)
        return output, finals

    def _forward_one_state(self, input, hx, name):
        """RNN and GRU: one hidden state tensor."""
        from ...ops.shape import stack

        _refuse_packed(input, name)
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             + (" tensor instead" if name == "RNN" else " instead"))
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            hx = _ops_zeros((self.num_layers * (2 if self.bidirectional else 1), max_batch_size,
                             self.hidden_size), input)
        self.check_forward_args(input, hx, None)
        output, finals = self._run(input, list(hx.unbind(0)))
        hidden = stack(finals, 0)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden


class RNN(RNNBase):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu), over every step and layer."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.__dict__["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        else:
            self.__dict__["nonlinearity"] = kwargs.pop("nonlinearity", "tanh")
        nonlinearity = self.__dict__["nonlinearity"]
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_one_state(input, hx, "RNN")


class GRU(RNNBase):
    """Reset and update gates over a candidate state: ``h' = (1 - z) * n + z * h``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_one_state(input, hx, "GRU")


class LSTM(RNNBase):
    """Input, forget, cell and output gates; the state is the pair ``(h, c)``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None):
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        from ...ops.shape import stack

        _refuse_packed(input, "LSTM")
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        n = self.num_layers * (2 if self.bidirectional else 1)
        if hx is None:
            hx = (_ops_zeros((n, max_batch_size, real_hidden_size), input),
                  _ops_zeros((n, max_batch_size, self.hidden_size), input))
        else:
            want = 3 if is_batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not is_batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, None)
        hiddens = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
        output, finals = self._run(input, hiddens)
        h_n = stack([h for h, _ in finals], 0)
        c_n = stack([c for _, c in finals], 0)
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# --- the cells --------------------------------------------------------------------------------

class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        on_cpu(device)
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(_empty(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, name, hidden_label="hidden"):
        _refuse_packed(input, name)
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        return input, is_batched

    def _params(self):
        return {"w_hh": self.weight_hh, "b_hh": self.bias_hh, "w_hr": None}


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        input, is_batched = self._prepare(input, hx, "RNNCell")
        if hx is None:
            hx = _ops_zeros((input.size(0), self.hidden_size), input)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x_part = F.linear(input, self.weight_ih, self.bias_ih)
        ret = _rnn_step(x_part, hx, self.weight_hh, self.bias_hh, self.nonlinearity == "relu")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        input, is_batched = self._prepare(input, hx, "LSTMCell")
        if hx is None:
            zeros = _ops_zeros((input.size(0), self.hidden_size), input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        x_part = F.linear(input, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(x_part, hx, self.weight_hh, self.bias_hh, None)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        input, is_batched = self._prepare(input, hx, "GRUCell")
        if hx is None:
            hx = _ops_zeros((input.size(0), self.hidden_size), input)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        x_part = F.linear(input, self.weight_ih, self.bias_ih)
        ret = _gru_step(x_part, hx, self.weight_hh, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
