"""The version counter shared by a tensor and its views (Note [saved tensor versions])."""


class VersionCounter:
    """A mutable integer bumped by every in-place write to the storage it guards."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0

    def bump(self) -> None:
        self.value += 1
