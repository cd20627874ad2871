"""``torch.autograd.graph``'s saved-tensor hooks: ``saved_tensors_hooks``, ``save_on_cpu`` and
``disable_saved_tensors_hooks`` (Note [saved tensor hooks] in jitgrad/graph/node.py)."""
from __future__ import annotations

from ..graph.node import pop_saved_hooks, push_saved_hooks


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: every tensor saved for backward inside it (by built-in ops, in-place
    ops and custom Functions) goes through ``pack_hook(tensor) -> anything``, and backward
    gets ``unpack_hook(packed) -> Tensor`` back; the innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _check_enabled()
        push_saved_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        pop_saved_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Saved tensors are kept as CPU copies and moved back to their device in backward
    (``pin_memory`` is accepted; jitgrad has no pinned memory)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return (t.device, t.detach().cpu().clone() if t.is_cuda else t.detach().clone())

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


_disabled: list = []  # the messages of the disable_saved_tensors_hooks contexts entered


def _check_enabled():
    if _disabled:
        raise RuntimeError(_disabled[-1])


class disable_saved_tensors_hooks:  # noqa: N801
    """Context manager: setting saved-tensor hooks inside it raises ``error_message``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _disabled.pop()
        return False
