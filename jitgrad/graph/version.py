"""The version counter shared by a tensor and its views (Note [saved tensor versions])."""


class VersionCounter:
    """A mutable integer bumped by every in-place write to the storage it guards."""

    # every Tensor gets one: a class default and no ``__init__`` make ``VersionCounter()`` the
    # type's own allocation, without a Python frame (about half the cost of a slotted one with
    # an ``__init__``); ``bump`` stores the instance's own value
    value = 0

    def bump(self) -> None:
        self.value += 1
