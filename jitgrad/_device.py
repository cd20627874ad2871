"""``jitgrad.Device``: where a tensor lives, spelled like PyTorch (``"cpu"``, ``"cuda:0"``)."""
from __future__ import annotations


class Device(str):
    """A device name that is also a ``str`` (``t.device == "cpu"``), with PyTorch's ``type`` and
    ``index``. ``Device("cuda")`` means the current CUDA device, ``cuda:0``."""

    __slots__ = ()

    def __new__(cls, spec="cpu", index=None):
        return str.__new__(cls, canonical(spec, index))

    @property
    def type(self) -> str:
        return self.split(":")[0]

    @property
    def index(self):
        return int(self.split(":")[1]) if ":" in self else None

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


def canonical(spec, index=None) -> str:
    """``"cpu"`` or ``"cuda:N"`` for a device spec (a string, a Device or an int, PyTorch's
    shorthand for ``cuda:N``); anything else raises naming what is accepted."""
    if isinstance(spec, int) and not isinstance(spec, bool):
        spec, index = "cuda", spec
    if not isinstance(spec, str):
        raise TypeError(f"device must be a string like 'cpu' or 'cuda:0', or an int, not "
                        f"{type(spec).__name__}")
    kind, _, num = spec.partition(":")
    if kind == "cpu" and not num and index in (None, 0):
        return "cpu"
    if kind == "cuda":
        if num and index is not None:
            raise RuntimeError(f"device {spec!r} already names an index; got index={index} too")
        n = int(num) if num.isdigit() else (0 if not num and index is None else index)
        if n is not None and n >= 0:
            return f"cuda:{n}"
    raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {spec}"
                       if kind not in ("cpu", "cuda") else f"Invalid device string: '{spec}'")


class Size(tuple):
    """A tensor's shape (PyTorch's ``torch.Size``): a tuple of ints, so everything a tuple
    does works (``==`` with a tuple, unpacking, slicing), plus ``numel()``. Its ``repr`` is the
    tuple's, so messages that show a shape read as before. A slice is a plain tuple (PyTorch:
    a Size): indexing stays tuple's C code, ``t.shape[0]`` being on every hot path."""

    __slots__ = ()

    def numel(self) -> int:
        """The number of elements a tensor of this shape has (1 for ``()``)."""
        n = 1
        for s in self:
            n *= s
        return n
