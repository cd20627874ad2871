"""``jitgrad.optim``: optimizers with PyTorch's names, update rules and ``state_dict``s, each
parameter updated by one fused Numba kernel; ``lr_scheduler`` holds the schedulers."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
