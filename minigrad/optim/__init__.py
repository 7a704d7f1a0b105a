"""Optimizers (``mg.optim``), as ``torch.optim``: SGD, Adam, AdamW, RMSprop, Adadelta, Adagrad, ``lr_scheduler``."""

from minigrad.optim import lr_scheduler
from minigrad.optim.adadelta import Adadelta
from minigrad.optim.adagrad import Adagrad
from minigrad.optim.adam import Adam, AdamW
from minigrad.optim.lbfgs import LBFGS as LBFGS
from minigrad.optim.optimizer import Optimizer
from minigrad.optim.rmsprop import RMSprop
from minigrad.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adadelta", "Adagrad", "LBFGS", "lr_scheduler"]
