"""The module classes of ``gradwalk.nn``, one small file per family."""
from .activation import (ELU, GELU, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, ReLU, SiLU,  # noqa: F401
                         Sigmoid, Softmax, Softplus, Tanh)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .conv import Conv2d, MaxPool2d  # noqa: F401
from .dropout import Dropout, Dropout2d  # noqa: F401
from .pooling import AdaptiveAvgPool2d, AvgPool2d, ConvTranspose2d, DataParallel  # noqa: F401
from .linear import Flatten, Identity, Linear, Unflatten  # noqa: F401
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss  # noqa: F401
from .loss import HuberLoss, SmoothL1Loss  # noqa: F401
from .module import Module  # noqa: F401
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm  # noqa: F401
from .sparse import Embedding  # noqa: F401
