"""``jitgrad.save`` / ``jitgrad.load``: tensors, state dicts and nested containers in a file
format that never runs code when it is read.

Format: a NumPy ``.npz`` archive (a zip of ``.npy`` files) holding one array per tensor
(``a0``, ``a1``...) plus ``__jitgrad__``: UTF-8 JSON describing the object tree, stored as a
uint8 array. Loading uses ``np.load(..., allow_pickle=False)`` and ``json.loads``, and accepts
only numeric/bool arrays, so a crafted file cannot execute anything (unlike pickle, which
``torch.load`` used before ``weights_only``).

Supported values: Tensors (and ``nn.Parameter``), NumPy arrays and scalars, dicts /
OrderedDicts (keys: str, int, float, bool, None, tuples of those), lists, tuples, str, int,
float (including inf/nan), bool and None. A tensor stored twice is stored once and comes back
as one object. ``requires_grad`` and the Parameter type are kept; gradients and graphs are not.
A CUDA tensor is stored from a host copy with its device name (``"device": "cuda:0"``) and loads
back onto that device unless ``map_location`` says otherwise.

Bad files raise ``RuntimeError``: "not a jitgrad file" for something else (another zip, a
``.npy``, random bytes), "not a valid jitgrad file" for a damaged one. Every member is read in
full so its zip CRC-32 is verified (a truncated file or a flipped data byte is caught), and each
array's ``.npy`` header must account for exactly the bytes its data holds.
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from collections import OrderedDict

import numpy as np

from .tensor import Tensor

__all__ = ["save", "load"]

_META = "__jitgrad__"
_FORMAT = "jitgrad-npz"
_VERSION = 1


class _Writer:
    def __init__(self):
        self.arrays: dict = {}
        self._ids: dict = {}
        self._alive: list = []  # keeps the saved objects alive so their ids stay unique

    def _array(self, obj, arr, fetch=None) -> str:
        key = self._ids.get(id(obj))
        if key is None:
            if fetch is not None:  # a device tensor: copied to the host once
                arr = fetch()
            key = self._ids[id(obj)] = f"a{len(self.arrays)}"
            self.arrays[key] = arr if arr.flags.c_contiguous else arr.copy(order="C")
            self._alive.append(obj)
        return key

    def encode(self, obj):
        from .nn.parameter import Parameter
        from .nn.modules.module import Module

        if obj is None or isinstance(obj, (bool, str, int, float)):
            return obj
        if isinstance(obj, Tensor):
            node = {"$": "tensor", "requires_grad": bool(obj.requires_grad),
                    "parameter": isinstance(obj, Parameter)}
            if obj.is_cuda:
                node["device"] = str(obj.device)
                node["array"] = self._array(obj, None, lambda: obj._host("jitgrad.save"))
            else:
                node["array"] = self._array(obj, obj._host("jitgrad.save"))
            return node
        if isinstance(obj, np.ndarray):
            _check_dtype(obj.dtype)
            return {"$": "ndarray", "array": self._array(obj, obj)}
        if isinstance(obj, np.generic):
            _check_dtype(obj.dtype)
            return {"$": "npscalar", "array": self._array(obj, np.asarray(obj))}
        if isinstance(obj, dict):
            return {"$": "odict" if isinstance(obj, OrderedDict) else "dict",
                    "items": [[self.encode_key(k), self.encode(v)] for k, v in obj.items()]}
        if isinstance(obj, (list, tuple)):
            return {"$": "list" if isinstance(obj, list) else "tuple",
                    "items": [self.encode(v) for v in obj]}
        if isinstance(obj, Module):
            raise TypeError("jitgrad.save: a Module cannot be saved as an object (that would "
                            "need code to run on load); save module.state_dict() and load it "
                            "with module.load_state_dict(jitgrad.load(path))")
        raise TypeError(f"jitgrad.save: cannot save an object of type {type(obj).__name__}; "
                        "supported: Tensor, ndarray, dict, list, tuple, str, int, float, bool, "
                        "None")

    def encode_key(self, key):
        if key is None or isinstance(key, (bool, int, float, str)):
            return key
        if isinstance(key, tuple):
            return {"$": "tuple", "items": [self.encode_key(k) for k in key]}
        raise TypeError(f"jitgrad.save: unsupported dict key type {type(key).__name__}")


def _check_dtype(dt):
    if np.dtype(dt).kind not in "biuf":
        raise TypeError(f"jitgrad.save/load: only bool, integer and float arrays are supported, "
                        f"got dtype {dt}")


def save(obj, f) -> None:
    """Write ``obj`` (a Tensor, a state dict, an optimizer state dict, nested containers...)
    to ``f``: a path (written as given, no extension added) or a binary file object.

    The file is a ``.npz`` zip with one ``.npy`` per tensor and a JSON description; see
    ``jitgrad.serialization``. Read it back with ``jitgrad.load``.
    """
    w = _Writer()
    meta = {"format": _FORMAT, "version": _VERSION, "root": w.encode(obj)}
    payload = np.frombuffer(json.dumps(meta, allow_nan=True).encode("utf-8"), dtype=np.uint8)
    arrays = dict(w.arrays)
    arrays[_META] = payload
    if isinstance(f, (str, os.PathLike)):
        tmp = os.fspath(f) + ".tmp"
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, f)
    else:
        np.savez(f, **arrays)


def load(f, map_location=None, weights_only=True):
    """Read an object written by ``jitgrad.save`` from a path or binary file object.

    Never executes code from the file (``allow_pickle=False``, JSON metadata, numeric arrays
    only). ``map_location`` (PyTorch's): None puts each tensor back on the device it was saved
    from; a device (``"cpu"``, ``"cuda"``, ``"cuda:1"``, an int) puts every tensor there; a
    dict maps saved device names to devices (``{"cuda:0": "cpu"}``), others stay where they
    were saved. ``weights_only`` is accepted for PyTorch compatibility; loading is always
    weights-only.
    """
    where = _location_map(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(io.BytesIO(fh.read()), where)
    return _load(f, where)


def _location_map(map_location):
    """A function ``saved device name -> device to load onto`` for ``map_location``."""
    from ._device import Device

    if map_location is None:
        return lambda saved: saved
    if isinstance(map_location, dict):
        table = {str(Device(k)): str(Device(v)) for k, v in map_location.items()}
        return lambda saved: table.get(saved, saved)
    if isinstance(map_location, (str, int)) and not isinstance(map_location, bool):
        target = str(Device(map_location))
        return lambda saved: target
    raise TypeError(f"jitgrad.load: map_location must be None, a device (str or int) or a dict "
                    f"of device names, got {type(map_location).__name__}")


_ZIP_MAGIC = b"PK\x03\x04"


def _bad_file(reason) -> RuntimeError:
    return RuntimeError(f"jitgrad.load: not a valid jitgrad file ({reason})")


def _load(fh, where=lambda saved: saved):
    if fh.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
        raise RuntimeError("jitgrad.load: not a jitgrad file (not a zip archive)")
    fh.seek(-len(_ZIP_MAGIC), io.SEEK_CUR)
    try:
        arrays = _read_arrays(fh)
        if _META not in arrays:
            raise RuntimeError("jitgrad.load: not a jitgrad file (no __jitgrad__ metadata)")
        meta = json.loads(arrays[_META].tobytes().decode("utf-8"))
    except RuntimeError as err:
        if str(err).startswith("jitgrad.load"):
            raise
        raise _bad_file(err) from None  # zipfile's "File is encrypted" (a flipped flag bit)
    except Exception as err:  # noqa: BLE001 - zipfile, zlib, json and the .npy header parser
        raise _bad_file(f"{type(err).__name__}: {err}") from None  # raise many types
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise RuntimeError("jitgrad.load: unknown file format")
    if meta.get("version", 0) > _VERSION:
        raise RuntimeError(f"jitgrad.load: file version {meta['version']} is newer than "
                           f"this jitgrad supports ({_VERSION})")
    try:
        return _Reader(arrays, where).decode(meta["root"])
    except (KeyError, TypeError, ValueError, AttributeError) as err:  # a malformed object tree
        raise _bad_file(f"malformed metadata: {type(err).__name__}: {err}") from None


def _read_arrays(fh) -> dict:
    """Every ``.npy`` member of the zip ``fh`` as a read-only array, by name without ``.npy``.

    Each member is read in full, so ``zipfile`` verifies its CRC-32 (it checks at the end
    of a member: ``np.load`` reads only as many bytes as the header declares, so it never
    checks, and never sees data beyond the declared shape). The data must then hold exactly
    the bytes its header declares."""
    arrays = {}
    with zipfile.ZipFile(fh) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                raise _bad_file(f"unexpected member {info.filename!r}")
            arrays[info.filename[:-len(".npy")]] = _parse_npy(archive.read(info), info.filename)
    return arrays


def _parse_npy(raw: bytes, name: str) -> np.ndarray:
    """The array in the ``.npy`` bytes ``raw``, refusing object dtypes (no unpickling) and a
    header whose shape does not account for every data byte."""
    stream = io.BytesIO(raw)
    version = np.lib.format.read_magic(stream)
    read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if read_header is None:
        raise _bad_file(f"{name}: unsupported .npy version {version}")
    shape, fortran_order, dtype = read_header(stream)
    if dtype.hasobject:
        raise _bad_file(f"{name}: object arrays are refused (loading them would unpickle)")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    declared, held = count * dtype.itemsize, len(raw) - stream.tell()
    if declared != held:
        raise _bad_file(f"{name}: the header declares shape {shape} of {dtype} ({declared} "
                        f"bytes) but the data holds {held} bytes")
    arr = np.frombuffer(raw, dtype=dtype, count=count, offset=stream.tell())
    return arr.reshape(shape, order="F" if fortran_order else "C")


class _Reader:
    def __init__(self, arrays, where=lambda saved: saved):
        self.arrays = arrays
        self.cache: dict = {}
        self.where = where

    def _array(self, key):
        if key not in self.arrays or key == _META:
            raise _bad_file(f"missing array {key!r}")
        arr = self.arrays[key]
        if arr.dtype.kind not in "biuf":  # (save writes no others)
            raise _bad_file(f"array {key!r} has dtype {arr.dtype}; only bool, integer and "
                            "float arrays are stored")
        return arr

    def decode(self, node):
        if not isinstance(node, dict):
            if isinstance(node, list):
                raise _bad_file("bare list in the object tree")
            return node
        kind = node.get("$")
        if kind == "tensor":
            key = node["array"]
            if key not in self.cache:
                arr = np.array(self._array(key))
                device = self.where(str(node.get("device", "cpu")))
                if device != "cpu":
                    arr = _to_device(arr, device)
                if node.get("parameter"):
                    from .nn.parameter import Parameter
                    t = Parameter(Tensor._make(arr), bool(node.get("requires_grad", True)))
                else:
                    t = Tensor._make(arr)
                    if node.get("requires_grad"):
                        t.requires_grad_(True)
                self.cache[key] = t
            return self.cache[key]
        if kind == "ndarray":
            return np.array(self._array(node["array"]))
        if kind == "npscalar":
            return self._array(node["array"])[()]
        if kind in ("dict", "odict"):
            items = ((self.decode_key(k), self.decode(v)) for k, v in node["items"])
            return OrderedDict(items) if kind == "odict" else dict(items)
        if kind == "list":
            return [self.decode(v) for v in node["items"]]
        if kind == "tuple":
            return tuple(self.decode(v) for v in node["items"])
        raise _bad_file(f"unknown node {kind!r}")

    def decode_key(self, key):
        if isinstance(key, dict) and key.get("$") == "tuple":
            return tuple(self.decode_key(k) for k in key["items"])
        return key


def _to_device(arr, device):
    from . import cuda
    from .ops.core import dispatch

    if not cuda.is_available():
        raise RuntimeError(f"jitgrad.load: attempting to load a tensor onto {device}, but "
                           "jitgrad.cuda.is_available() is False; pass map_location='cpu' to load "
                           "it on the CPU")
    return dispatch.move(arr, device)
