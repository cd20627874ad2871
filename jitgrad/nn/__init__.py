"""``jitgrad.nn``: modules, parameters, initialisers and the functional layer API, with
PyTorch's names and semantics (``jitgrad.nn.Linear`` is ``torch.nn.Linear``)."""
from . import functional, init, utils
from .modules import (GELU, AvgPool2d, BatchNorm1d, BatchNorm2d, BCELoss, BCEWithLogitsLoss,
                      Conv1d, Conv2d, CrossEntropyLoss, Dropout, Embedding, Flatten, HuberLoss,
                      Identity, L1Loss, LayerNorm, LeakyReLU, Linear, LogSoftmax, MaxPool2d,
                      Module, ModuleDict, ModuleList, MSELoss, NLLLoss, ReLU, Sequential, Sigmoid,
                      SiLU, Softmax, Softplus, Tanh)
from .parameter import Parameter

__all__ = ["Parameter", "functional", "init", "utils", "Module", "Sequential", "ModuleList",
           "ModuleDict", "Identity", "Linear", "Flatten", "Conv1d", "Conv2d", "MaxPool2d",
           "AvgPool2d", "Dropout", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Embedding", "ReLU",
           "Tanh", "Sigmoid", "GELU", "SiLU", "Softplus", "LeakyReLU", "Softmax", "LogSoftmax",
           "MSELoss", "L1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
           "BCEWithLogitsLoss"]
