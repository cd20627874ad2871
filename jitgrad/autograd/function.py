"""Custom differentiable operations: ``class F(jitgrad.autograd.Function)`` with static
``forward(ctx, ...)`` and ``backward(ctx, *grads)``, called as ``F.apply(...)``.

The ctx IS the graph node (as in PyTorch), an instance of the generated ``<Name>Backward`` class.
"""
from __future__ import annotations

from ..graph.grad_mode import is_grad_enabled, no_grad
from ..graph.node import SECOND_BACKWARD_MSG, Node, SavedTensor


def _Tensor():
    from ..ops.core import dispatch

    return dispatch.Tensor


class BackwardCFunction(Node):
    """The node (and ctx) of one ``Function.apply`` call."""

    _forward_cls: type = None

    def __init__(self):
        super().__init__()
        self.needs_input_grad: tuple = ()
        self._to_save: tuple = ()
        self._saved: list | None = None
        self._non_differentiable: set = set()
        self._materialize_grads = True
        self._tensor_positions: tuple = ()

    # --- ctx API ---------------------------------------------------------------------------
    def save_for_backward(self, *tensors) -> None:
        """Save tensors (inputs or outputs, or None) for ``backward``; checked for in-place
        modification when unpacked."""
        for t in tensors:
            if t is not None and not isinstance(t, _Tensor()):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        if self._saved is None:  # inside forward, or no recording happened
            return tuple(self._to_save)
        return tuple(s.unpack(self) if s is not None else None for s in self._saved)

    def mark_non_differentiable(self, *outputs) -> None:
        """Mark outputs that never get a gradient (e.g. indices)."""
        self._non_differentiable = {id(o) for o in outputs}

    def mark_dirty(self, *tensors) -> None:
        raise NotImplementedError("mark_dirty (in-place custom Functions) is not supported yet; "
                                  "return a new tensor from forward instead")

    def set_materialize_grads(self, value: bool) -> None:
        """Whether missing output gradients reach ``backward`` as zeros (default) or None."""
        self._materialize_grads = bool(value)

    def _release(self):
        super()._release()
        self._saved = None
        self._to_save = ()

    # --- execution -------------------------------------------------------------------------
    def apply(self, grad_outputs: list) -> list:
        if self._materialize_grads:
            from ..ops.core import dispatch

            grad_outputs = [dispatch.zeros(*meta) if g is None and meta is not None else g
                            for g, meta in zip(grad_outputs, self._output_meta)]
        result = self._forward_cls.backward(self, *grad_outputs)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self.needs_input_grad)
        if len(result) != n_args:
            if len(result) > n_args and all(r is None for r in result[n_args:]):
                result = result[:n_args]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n_args}, got {len(result)})")
        positions = set(self._tensor_positions)
        for i, r in enumerate(result):
            if i not in positions and r is not None:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   "input was not a Variable")
        return [result[p] if self.needs_input_grad[p] else None for p in self._tensor_positions]


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})


class Function(metaclass=_FunctionMeta):
    """Base class for custom autograd operations (PyTorch's ``torch.autograd.Function``)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    # a subclass whose caller propagates the tangents itself (jitgrad.numpy's primitives)
    _tangents_by_caller = False

    @classmethod
    def apply(cls, *args, **kwargs):
        out, ctx = cls._apply(*args, **kwargs)
        from . import forward_ad

        if forward_ad._levels and not cls._tangents_by_caller:
            _forward_tangents(cls, ctx, args, out)
        return out

    @classmethod
    def _apply(cls, *args, **kwargs):
        Tensor = _Tensor()
        from ..ops.core.recording import record_node

        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx._tensor_positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        with no_grad():
            raw = cls.forward(ctx, *args, **kwargs)
        is_tuple = isinstance(raw, tuple)
        raw_outputs = raw if is_tuple else (raw,)
        record = is_grad_enabled() and any(ctx.needs_input_grad)
        inputs = {id(a) for a in args if isinstance(a, Tensor)}
        outputs = []
        for o in raw_outputs:
            if isinstance(o, Tensor) and id(o) in inputs:
                o = o.detach()  # an input returned as is: a new tensor object carries the history
            outputs.append(o)
        if not record:
            return (tuple(outputs) if is_tuple else outputs[0]), ctx
        positions = ctx._tensor_positions
        needs = ctx.needs_input_grad
        # Note [one way to wire a node] (ops/core/recording.py): edges to the Tensor arguments,
        # the ctx keeps the number it got when made (before forward, as PyTorch's)
        record_node(ctx, [args[p] for p in positions], tuple(needs[p] for p in positions), outputs,
                    [isinstance(o, Tensor) and id(r) not in ctx._non_differentiable
                     and o.dtype.is_differentiable for o, r in zip(outputs, raw_outputs)],
                    needs_input_grad=needs, numbered=True)
        by_id = {id(r): o for r, o in zip(raw_outputs, outputs)}
        ctx._saved = [None if t is None else
                      SavedTensor(by_id[id(t)], is_output=by_id[id(t)]._grad_fn is ctx)
                      if id(t) in by_id else SavedTensor(t) for t in ctx._to_save]
        ctx._to_save = ()
        return (tuple(outputs) if is_tuple else outputs[0]), ctx


def _forward_tangents(cls, ctx, args, out) -> None:
    """Forward mode through a custom Function: its ``jvp(ctx, *tangents)`` (one tangent per
    forward argument: zeros for a tensor without one, None for a non-tensor) gives the outputs'
    tangents; without a ``jvp`` an input carrying a tangent raises, as in PyTorch, never a
    silently lost tangent."""
    from types import SimpleNamespace

    from . import forward_ad

    Tensor = _Tensor()
    if cls.jvp is Function.jvp:
        visible = forward_ad._levels[:forward_ad._visible()]
        if any(isinstance(a, Tensor) and level.get(a) is not None
               for level in visible for a in args):
            cls.jvp(None)
        return

    def rule(tangents, primals, outputs):
        from ..ops import creation

        full = [t if t is not None or not isinstance(a, Tensor) else creation.zeros_like(a)
                for t, a in zip(tangents, args)]
        return cls.jvp(ctx, *full)

    op = SimpleNamespace(name=cls.__name__, node_name=f"{cls.__name__} (custom Function)",
                         differentiable=True, elementwise=False, jvp=rule)
    forward_ad._propagate(op, args, {}, out)


class FunctionCtx(BackwardCFunction):
    """The type of ``ctx`` (for annotations)."""


ONCE_DIFFERENTIABLE_MSG = ("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


class _DelayedError(Function):
    """The outputs of a ``@once_differentiable`` backward under ``create_graph``: their
    values, with a node that raises when differentiated (PyTorch's ``DelayedError``)."""

    @staticmethod
    def forward(ctx, n, *tensors):
        # tensors: the n results, then the incoming gradients that require grad (inputs, so
        # that the node is recorded although the results were computed under no_grad)
        outs = tuple(t.clone() for t in tensors[:n])
        return outs if n > 1 else outs[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ONCE_DIFFERENTIABLE_MSG)


def once_differentiable(fn):
    """Decorator for a Function's ``backward``: it runs under ``no_grad`` (it need not be
    written with differentiable ops), and under ``create_graph`` its results carry a node that
    raises PyTorch's error if backward is taken through them."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        T = _Tensor()
        if not any(isinstance(a, T) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        positions = [i for i, o in enumerate(outs) if isinstance(o, T)]
        if not positions:
            return outputs
        wrapped = _DelayedError.apply(len(positions), *(outs[i] for i in positions),
                                      *(a for a in args if isinstance(a, T) and a.requires_grad))
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        result = list(outs)
        for i, w in zip(positions, wrapped):
            result[i] = w
        return result[0] if single else tuple(result)

    return wrapper
