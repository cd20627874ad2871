"""``jitgrad.optim``: optimizers with PyTorch's names, defaults, update rules and
``state_dict``s. SGD, Adam(W), RMSprop and Adagrad update each parameter with one fused Numba
kernel; Adamax, NAdam, RAdam, Adadelta, ASGD and Rprop are written with Tensor ops under
``no_grad`` (``TensorRuleOptimizer``); LBFGS re-evaluates a closure (optionally with a
strong-Wolfe line search). ``lr_scheduler`` holds the schedulers."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .adaptive import Adadelta, Adamax, NAdam, RAdam
from .classic import ASGD, Rprop
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam",
           "RAdam", "Adadelta", "ASGD", "Rprop", "LBFGS", "lr_scheduler"]
