"""The layer classes of ``jitgrad.nn``."""
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, SiLU, Sigmoid, Softmax, Softplus, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout
from .linear import Flatten, Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .pooling import AvgPool2d, MaxPool2d
from .sparse import Embedding

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "Identity", "Linear", "Flatten",
           "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "Dropout", "BatchNorm1d", "BatchNorm2d",
           "LayerNorm", "Embedding", "ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "Softplus",
           "LeakyReLU", "Softmax", "LogSoftmax", "MSELoss", "L1Loss", "HuberLoss",
           "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"]
